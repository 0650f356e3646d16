package org.rds4j.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

/** Command-line handling that needs no network: every case here fails or helps before a stack is created. */
class MainTest {
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    private int run(String... argv) {
        return Main.run(argv, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
    }

    private String out() {
        return out.toString(StandardCharsets.UTF_8);
    }

    private String err() {
        return err.toString(StandardCharsets.UTF_8);
    }

    @Test
    void noArgumentsIsAUsageError() {
        assertEquals(2, run());
        assertTrue(err().contains("usage: rds4j COMMAND"));
        assertTrue(out().isEmpty());
    }

    @Test
    void topLevelHelpListsEveryCommand() {
        assertEquals(0, run("--help"));
        for (String c : new String[] {"stress", "echo", "send", "recv", "ping", "info", "rds-stress"}) {
            assertTrue(out().contains("  " + c + " "), c);
        }
    }

    @Test
    void unknownCommand() {
        assertEquals(2, run("frobnicate"));
        assertTrue(err().contains("unknown command 'frobnicate'"));
    }

    @ParameterizedTest
    @ValueSource(strings = {"stress", "echo", "send", "recv", "ping", "info", "rds-stress"})
    void everyCommandHasHelp(String command) {
        assertEquals(0, run(command, "--help"));
        assertTrue(out().startsWith("usage: rds4j " + command), out());
        assertTrue(err().isEmpty());
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "stress --bogus",
        "stress --sockets 0",
        "stress --size 2000000",
        "stress --duration abc",
        "stress --transport udp",
        "stress extra",
        "stress --port -1",
        "stress --port 65534",
        "stress --paths 3",
        "echo",
        "echo --bind 127.0.0.1",
        "echo --bind 127.0.0.1:4000 --tcp-port 0",
        "send --to 127.0.0.2:4000",
        "send --bind 127.0.0.1:4001",
        "send --bind 127.0.0.1:4001 --to 127.0.0.2:4000 --count -1",
        "send --bind 127.0.0.1:4001 --to 127.0.0.2:4000 --expect-echo=1",
        "recv --bind 127.0.0.2:4000",
        "recv --count 5",
        "recv --bind 127.0.0.2:4000 --count 5 --timeout 0",
        "recv --bind 127.0.0.2:4000 --count 5 --stall -1",
        "recv --bind 127.0.0.2:4000 --count 5 --stall soon",
        "recv --bind 127.0.0.2:4000 --count 5 --stall",
        "recv --bind 127.0.0.2:4000 --count 5 --stall 1 --stall 2",
        "recv --bind 127.0.0.2:4000 --count 5 --rcvbuf 0",
        "recv --bind 127.0.0.2:4000 --count 5 --rcvbuf lots",
        "recv --bind 127.0.0.2:4000 --count 5 --nonblocking",
        "send --bind 127.0.0.1:4001 --to 127.0.0.2:4000 --nonblocking=yes",
        "send --bind 127.0.0.1:4001 --to 127.0.0.2:4000 --sndbuf 0",
        "send --bind 127.0.0.1:4001 --to 127.0.0.2:4000 --sndbuf 3000000000",
        "send --bind 127.0.0.1:4001 --to 127.0.0.2:4000 --stall 1",
        "ping",
        "ping 127.0.0.1 127.0.0.2",
        "ping --count 0 127.0.0.1",
        "ping --interval x 127.0.0.1",
        "ping -c x 127.0.0.1",
        "ping -i 1fortnight 127.0.0.1",
        "ping -I",
        "ping -x 127.0.0.1",
        "ping -c 1 --count 1 127.0.0.1",
        "ping -I ::1 127.0.0.1",
        "info",
        "info --pid 1 --jmx service:jmx:rmi:///jndi/rmi://127.0.0.1:1/jmxrmi",
        "info --pid abc",
        "info --pid 0",
        "info --pid 1 -x",
        "info --pid 1 -cx",
        "info --pid 1 extra",
        "info --jmx not-a-url",
    })
    void badArgumentsPrintUsageAndExitTwo(String line) {
        String[] argv = line.split(" ");
        assertEquals(2, run(argv), err());
        assertTrue(err().contains("rds4j " + argv[0] + ": "), err());
        assertTrue(err().contains("usage: rds4j " + argv[0]), err());
        assertTrue(out().isEmpty(), out());
    }
}
