package org.rds4j.bench.contenders;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * Key material for the TLS contender, made once per run with the JDK's own {@code keytool} (the JDK has no API that
 * issues a certificate): one self-signed EC P-256 key, which each stack presents and trusts, so both ends
 * authenticate as a deployment with a cluster CA would. The files live in a temporary directory deleted on exit.
 */
final class BenchTls {
    private static final char[] PASSWORD = "rds4j-bench".toCharArray();
    private static SSLContext context;

    private BenchTls() {
    }

    /** The context both stacks of the TLS cells use: TLS 1.3, the benchmark's key, that key's certificate trusted. */
    static synchronized SSLContext context() throws IOException {
        if (context == null) {
            context = make();
        }
        return context;
    }

    private static SSLContext make() throws IOException {
        Path dir = Files.createTempDirectory("rds4j-bench-tls");
        Path store = dir.resolve("bench.p12");
        dir.toFile().deleteOnExit();
        store.toFile().deleteOnExit();
        Path keytool = Path.of(System.getProperty("java.home"), "bin", "keytool");
        Process p = new ProcessBuilder(keytool.toString(), "-genkeypair", "-alias", "bench", "-keyalg", "EC",
                "-groupname", "secp256r1", "-dname", "CN=rds4j bench", "-validity", "2", "-storetype", "PKCS12",
                "-keystore", store.toString(), "-storepass", new String(PASSWORD), "-keypass", new String(PASSWORD))
                .redirectErrorStream(true).start();
        try {
            if (!p.waitFor(60, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IOException("keytool took over 60 s to make the benchmark's TLS key");
            }
        } catch (InterruptedException e) {
            p.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while keytool made the benchmark's TLS key", e);
        }
        String output = new String(p.getInputStream().readAllBytes());
        if (p.exitValue() != 0) {
            throw new IOException("keytool failed (" + p.exitValue() + ") making the benchmark's TLS key: " + output);
        }
        try (InputStream in = Files.newInputStream(store)) {
            KeyStore ks = KeyStore.getInstance("PKCS12");
            ks.load(in, PASSWORD);
            KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            kmf.init(ks, PASSWORD);
            TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            tmf.init(ks);
            SSLContext ctx = SSLContext.getInstance("TLSv1.3");
            ctx.init(kmf.getKeyManagers(), tmf.getTrustManagers(), null);
            return ctx;
        } catch (GeneralSecurityException e) {
            throw new IOException("cannot load the benchmark's TLS key: " + e, e);
        } finally {
            Files.deleteIfExists(store);
            Files.deleteIfExists(dir);
        }
    }
}
