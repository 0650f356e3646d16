package org.rds4j.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * rds4j as Java modules: the tools start with {@code -m org.rds4j.tools/...} on a module path holding only rds4j's
 * modules, Netty, SLF4J and HdrHistogram, so every module-info (requires, exports, the {@code provides}/{@code uses} that find the
 * stack and the transports) is exercised, over real TCP. Everything else runs on the class path.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ModulePathTest {

    @Test
    void theToolsRunAsModulesOverTcp() throws Exception {
        int tcpPort;
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
            tcpPort = s.getLocalPort();
        }
        String out = runAsModules("stress", "--duration", "1", "--warmup", "0", "--tcp-port", String.valueOf(tcpPort));
        assertTrue(out.contains("stress: OK"), out);
    }

    /** The tools' module declares its use of the transport SPI: as modules, --version still lists them. */
    @Test
    void versionListsTheTransportsAsModules() throws Exception {
        String out = runAsModules("--version");
        assertTrue(out.contains("transports: loopback, tcp (default"), out);
    }

    /** Runs the tools as modules with {@code args}; their output, after asserting they exited with 0. */
    private static String runAsModules(String... args) throws Exception {
        List<String> path = new ArrayList<>();
        for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
            String name = new File(entry).getName();
            boolean ours = entry.contains("rds-") && !entry.contains("test-classes") && !name.endsWith("-tests.jar");
            boolean runtime = name.startsWith("netty-") || name.startsWith("slf4j-") || name.startsWith("HdrHistogram");
            if ((ours || runtime) && !name.contains("aarch_64")) {
                path.add(entry);
            }
        }
        String java = System.getProperty("java.home") + File.separator + "bin" + File.separator + "java";
        List<String> command = new ArrayList<>(List.of(java, "--module-path", String.join(File.pathSeparator, path),
                "-m", "org.rds4j.tools/org.rds4j.tools.Main"));
        command.addAll(List.of(args));
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        try {
            CompletableFuture<String> output = CompletableFuture.supplyAsync(() -> read(p.getInputStream()));
            assertTrue(p.waitFor(90, TimeUnit.SECONDS), "the modular run did not end: " + command);
            String out = output.get(10, TimeUnit.SECONDS);
            assertEquals(0, p.exitValue(), out);
            return out;
        } finally {
            p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
    }

    private static String read(InputStream in) {
        try (in) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            return e.toString();
        }
    }
}
