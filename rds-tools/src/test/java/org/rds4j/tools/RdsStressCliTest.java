package org.rds4j.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** rds-stress's command line as getopt_long reads it, and the options rds4j refuses; no network is touched. */
class RdsStressCliTest {
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    private int run(String... argv) {
        String[] all = new String[argv.length + 1];
        all[0] = "rds-stress";
        System.arraycopy(argv, 0, all, 1, argv.length);
        return Main.run(all, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
    }

    @Test
    void helpListsEveryOption() {
        assertEquals(0, run("-h"));
        String text = out.toString(StandardCharsets.UTF_8);
        for (String o : new String[] {"-r, --recv-addr", "-p, --port", "-s, --send-addr", "-a, --ack-bytes",
                "-q, --req-bytes", " -o ", "-d, --depth", "-t, --tasks", "-T, --time", "-Q, --tos", "-v, --verify",
                "--use-cong-monitor", "--connect-retries", "-c, --report-cpu", "-V, --trace", "-z, --report-summary",
                "-R, --rtprio", "--show-params", "--show-histogram", "--show-outliers", "-D/--rdma-bytes", "-I", "-M",
                "--rdma-use-once", "--rdma-key-o-meter", "--async", "--reset", "--show-perfdata", "--tcp-port",
                "--message-counts"}) {
            assertTrue(text.contains(o), o + " missing from\n" + text);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"-D 4096", "-D4096", "--rdma-bytes 4096", "--rdma-b=4096", "-I 2", "-M 1",
            "--rdma-use-once 1", "--rdma-use-get-mr 1", "--rdma-use-fence 0", "--rdma-use-notify 1",
            "--rdma-cache-mrs 1", "--rdma-alignment 4096", "--rdma-key-o-meter"})
    void rdmaOptionsAreRefusedSayingWhy(String option) {
        List<String> argv = new java.util.ArrayList<>(List.of("-s", "127.0.0.1"));
        argv.addAll(List.of(option.split(" ")));
        assertEquals(2, run(argv.toArray(String[]::new)));
        String e = err.toString(StandardCharsets.UTF_8);
        assertTrue(e.contains("needs RDMA") && e.contains("RDS over TCP only"), e);
        assertTrue(out.toString(StandardCharsets.UTF_8).isEmpty());
    }

    @ParameterizedTest
    @ValueSource(strings = {"-Q 1", "--async", "--reset", "--show-perfdata"})
    void kernelOnlyFeaturesAreRefusedSayingWhy(String option) {
        List<String> argv = new java.util.ArrayList<>(List.of("-s", "127.0.0.1"));
        argv.addAll(List.of(option.split(" ")));
        assertEquals(2, run(argv.toArray(String[]::new)));
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("rds4j"), err.toString(StandardCharsets.UTF_8));
    }

    @Test
    void getoptSpellingsAllWork() throws Exception {
        RdsStressCli.Parsed p = RdsStressCli.parse(List.of("-s127.0.0.1", "-q4k", "-vzo", "--dep=8", "--tas", "3",
                "-p", "0x1000", "-a", "0100", "-T10", "--connect-retries=5", "--use-cong-monitor", "0",
                "--show-hist", "-r", "127.0.0.2"));
        RdsStressOptions o = p.options();
        assertTrue(p.active());
        assertEquals(0x7f000001L, o.sendAddr);
        assertEquals(0x7f000002L, o.receiveAddr);
        assertEquals(4096, o.reqSize);
        assertEquals(64, o.ackSize); // octal, as strtoull with base 0 reads it
        assertEquals(1, o.verify);
        assertEquals(1, o.summaryOnly);
        assertEquals(1, o.simplex);
        assertEquals(8, o.reqDepth);
        assertEquals(3, o.nrTasks);
        assertEquals(4096, o.startingPort);
        assertEquals(10, o.runTime);
        assertEquals(5, o.connectRetries);
        assertEquals(0, o.useCongMonitor);
        assertTrue(p.flags().showHistogram());
    }

    @Test
    void passiveSideNeedsNoSendOptions() throws Exception {
        RdsStressCli.Parsed p = RdsStressCli.parse(List.of("-p", "5000"));
        assertFalse(p.active());
        assertEquals(5000, p.options().startingPort);
        assertEquals(0, p.options().receiveAddr);
    }

    @Test
    void badValuesAreUsageErrors() {
        assertThrows(UsageException.class, () -> RdsStressCli.parse(List.of("-s", "127.0.0.1", "-a", "62")));
        assertThrows(UsageException.class, () -> RdsStressCli.parse(List.of("-s", "127.0.0.1", "-q", "12x")));
        assertThrows(UsageException.class, () -> RdsStressCli.parse(List.of("-s", "127.0.0.1", "-t", "65536")));
        assertThrows(UsageException.class, () -> RdsStressCli.parse(List.of("-s", "127.0.0.1", "-q", "2m")));
        assertThrows(UsageException.class, () -> RdsStressCli.parse(List.of("-s", "127.0.0.1", "-d", "0")));
        assertThrows(UsageException.class, () -> RdsStressCli.parse(List.of("--t", "2"))); // ambiguous
        assertThrows(UsageException.class, () -> RdsStressCli.parse(List.of("-x")));
        assertThrows(UsageException.class, () -> RdsStressCli.parse(List.of("-s")));
        assertThrows(UsageException.class, () -> RdsStressCli.parse(List.of("-s", "127.0.0.1", "stray")));
        assertEquals(2, run("-q"));
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("requires an argument"));
    }
}
