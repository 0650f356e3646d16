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
 * modules, Netty and SLF4J, so every module-info (requires, exports, the {@code provides}/{@code uses} that find the
 * stack and the transports) is exercised, over real TCP. Everything else runs on the class path.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ModulePathTest {

    @Test
    void theToolsRunAsModulesOverTcp() throws Exception {
        List<String> path = new ArrayList<>();
        for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
            String name = new File(entry).getName();
            boolean ours = entry.contains("rds-") && !entry.contains("test-classes") && !name.endsWith("-tests.jar");
            boolean runtime = name.startsWith("netty-") || name.startsWith("slf4j-");
            if ((ours || runtime) && !name.contains("aarch_64")) {
                path.add(entry);
            }
        }
        int tcpPort;
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
            tcpPort = s.getLocalPort();
        }
        String java = System.getProperty("java.home") + File.separator + "bin" + File.separator + "java";
        Process p = new ProcessBuilder(java, "--module-path", String.join(File.pathSeparator, path),
                "-m", "org.rds4j.tools/org.rds4j.tools.Main", "stress", "--duration", "1", "--warmup", "0",
                "--tcp-port", String.valueOf(tcpPort))
                .redirectErrorStream(true).start();
        try {
            CompletableFuture<String> output = CompletableFuture.supplyAsync(() -> read(p.getInputStream()));
            assertTrue(p.waitFor(90, TimeUnit.SECONDS), "the modular stress run did not end");
            String out = output.get(10, TimeUnit.SECONDS);
            assertEquals(0, p.exitValue(), out);
            assertTrue(out.contains("stress: OK"), out);
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
