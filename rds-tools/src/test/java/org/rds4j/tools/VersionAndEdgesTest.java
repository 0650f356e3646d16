package org.rds4j.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.rds4j.EbadfException;
import org.rds4j.Errno;
import org.rds4j.RdsStack;
import org.rds4j.RdsStackConfig;

/** What a user meets first: the version, a stack that is closed, a process that is not there. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class VersionAndEdgesTest {
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    private int run(String... argv) {
        out.reset();
        err.reset();
        return Main.run(argv, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
    }

    @Test
    void theLibraryKnowsItsVersionFromTheBuild() {
        // The build filters the version into a resource of rds-api: a release or a snapshot, never unknown here.
        assertTrue(RdsStack.version().matches("\\d+\\.\\d+\\.\\d+([-.].+)?"), RdsStack.version());
    }

    @Test
    void versionPrintsRds4jJavaAndTransports() {
        for (String flag : new String[] {"--version", "version", "-V"}) {
            assertEquals(0, run(flag), flag);
            String text = out.toString(StandardCharsets.UTF_8);
            String[] lines = text.split("\n");
            assertEquals(3, lines.length, text);
            assertEquals("rds4j " + RdsStack.version(), lines[0]);
            assertTrue(lines[1].startsWith("java " + System.getProperty("java.version") + " ("), text);
            assertTrue(lines[2].startsWith("transports: ") && lines[2].contains("loopback")
                    && lines[2].contains("tcp (default, port 16385, Netty "), text);
            assertTrue(err.toString(StandardCharsets.UTF_8).isEmpty());
        }
    }

    @Test
    void infoOfAProcessThatIsNotThereSaysSoWithoutAStackTrace() throws Exception {
        // The id of a process that has just ended: nothing runs under it (ids are reused only after wrapping).
        Process p = new ProcessBuilder("true").start();
        assertTrue(p.waitFor(30, TimeUnit.SECONDS));
        long pid = p.pid();
        assertFalse(ProcessHandle.of(pid).isPresent());
        assertEquals(1, run("info", "--pid", Long.toString(pid)));
        String text = err.toString(StandardCharsets.UTF_8);
        assertTrue(text.startsWith("rds4j info: no JVM with pid " + pid + " is running an rds4j stack"), text);
        assertFalse(text.contains("Exception"), text);
        assertFalse(text.contains("\tat "), text);
        assertTrue(out.toString(StandardCharsets.UTF_8).isEmpty());
    }

    @Test
    void openSocketOnAClosedStackThrowsEbadfAsDocumented() throws Exception {
        RdsStack stack = RdsStack.create(RdsStackConfig.builder().name("closed-stack")
                .address(InetAddress.getByName("127.0.0.1")).defaultTransport("loopback").jmx(false).build());
        stack.openSocket().close();
        stack.close();
        EbadfException e = assertThrows(EbadfException.class, stack::openSocket);
        assertEquals(Errno.EBADF, e.errno());
        assertTrue(e.getMessage().contains("closed-stack is closed"), e.getMessage());
    }
}
