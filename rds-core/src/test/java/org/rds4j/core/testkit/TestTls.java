package org.rds4j.core.testkit;

import java.io.InputStream;
import java.security.KeyStore;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * TLS contexts from the test key material of {@code rds-core/src/test/resources/tls} (made once by {@code
 * generate.sh} there, committed): a test CA, two nodes it signed ({@code node-a}, {@code node-b}) and a {@code
 * rogue} node with a self-signed certificate nobody trusts. For transport tests and the kernel suite.
 */
public final class TestTls {
    private static final char[] PASSWORD = "changeit".toCharArray();

    private TestTls() {
    }

    /**
     * A TLS 1.3 context with {@code node}'s key and the test CA as the only trust anchor.
     *
     * @param node {@code node-a}, {@code node-b} or {@code rogue}
     * @return the context
     * @throws Exception if the key material cannot be read
     */
    public static SSLContext context(String node) throws Exception {
        KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(load(node + ".p12"), PASSWORD);
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(load("trust.p12"));
        SSLContext ctx = SSLContext.getInstance("TLSv1.3");
        ctx.init(kmf.getKeyManagers(), tmf.getTrustManagers(), null);
        return ctx;
    }

    /**
     * A TLS 1.3 context that trusts the test CA and has no key: its handshakes present no certificate.
     *
     * @return the context
     * @throws Exception if the trust store cannot be read
     */
    public static SSLContext withoutCertificate() throws Exception {
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(load("trust.p12"));
        SSLContext ctx = SSLContext.getInstance("TLSv1.3");
        ctx.init(null, tmf.getTrustManagers(), null);
        return ctx;
    }

    private static KeyStore load(String resource) throws Exception {
        try (InputStream in = TestTls.class.getResourceAsStream("/tls/" + resource)) {
            if (in == null) {
                throw new AssertionError("missing test key material /tls/" + resource
                        + " (rds-core/src/test/resources/tls/generate.sh makes it)");
            }
            KeyStore ks = KeyStore.getInstance("PKCS12");
            ks.load(in, PASSWORD);
            return ks;
        }
    }
}
