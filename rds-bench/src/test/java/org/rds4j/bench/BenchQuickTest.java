package org.rds4j.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import org.junit.jupiter.api.Test;
import org.rds4j.tools.ThreadPlacement;

/**
 * The whole harness in {@code --quick} mode over every contender at 64 B and 64 KiB: every cell must have moved and
 * checked all its messages and produced every figure. No figure is compared with a threshold: this machine's speed
 * is nobody's business here, only that the numbers exist and are consistent.
 */
class BenchQuickTest {

    @Test
    void everyContenderProducesEveryFigureAt64BytesAnd64KiB() throws Exception {
        BenchOptions options = BenchOptions.parse(new String[] {"--quick", "--sizes", "64,64K"});
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream progress = new ByteArrayOutputStream();
        Bench.Outcome outcome = Bench.run(options, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(progress, true, StandardCharsets.UTF_8));
        String printed = out.toString(StandardCharsets.UTF_8);

        List<CellResult> cells = outcome.cells().get(0);
        assertEquals(2 * Contenders.all().size(), cells.size(), printed);
        for (CellResult c : cells) {
            String cell = c.size() + " B " + c.contender();
            assertTrue(c.ok(), () -> cell + " failed: " + c.error() + "\n" + printed);
            // Every message of the measured phase was received and checked (the receiver fails the cell otherwise).
            assertEquals(Settings.QUICK_COUNT, c.messages(), cell);
            assertTrue(c.nanos() > 0, cell);
            assertTrue(c.msgsPerSecond() > 0 && c.megabytesPerSecond() > 0, cell);
            // The RTT histogram holds every round trip, and its percentiles are in order.
            assertEquals(Settings.QUICK_COUNT, c.roundTrips(), cell);
            assertTrue(c.rttP50() > 0 && c.rttP50() <= c.rttP99() && c.rttP99() <= c.rttP999(), cell);
            // Allocation and CPU were measured (zero is possible for a short phase; -1 would mean not measured).
            assertTrue(c.allocatedBytes() >= 0 && c.allocatedPerMessage() >= 0, cell);
            assertTrue(c.cpuNanos() >= 0 && c.cpuSecondsPerMillion() >= 0, cell);
        }
        assertTrue(outcome.allOk());
        assertTrue(printed.contains("rds4j-loopback"), printed);
        assertTrue(printed.contains("msgs/s x nio"), printed);
    }

    /**
     * {@code --pin} over the contenders that run threads of their own for a side: every cell still completes, and the
     * table says where the sides ran. Skipped where threads cannot be placed (not Linux, no taskset, one CPU).
     */
    @Test
    void pinnedCellsComplete() {
        ThreadPlacement placement = placementOrSkip();
        BenchOptions options = BenchOptions.parse(new String[] {"--quick", "--pin", "--sizes", "64", "--only",
            "nio-packed,netty,rds4j-tcp,rds4j-loopback"});
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        Bench.Outcome outcome = Bench.run(options, placement, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8));
        String printed = out.toString(StandardCharsets.UTF_8);
        assertTrue(outcome.allOk(), printed);
        assertEquals(4, outcome.cells().get(0).size(), printed);
        assertTrue(printed.contains("side A pinned to CPU " + placement.cpu(true) + " and side B to CPU "
                + placement.cpu(false)), printed);
    }

    /** {@code --threads}: after each cell, the harness's two workers are among the threads that used CPU. */
    @Test
    void threadsNamesWhereEachCellsCpuWent() {
        BenchOptions options = BenchOptions.parse(new String[] {"--quick", "--threads", "--sizes", "64", "--only",
            "nio-packed,rds4j-tcp"});
        ByteArrayOutputStream progress = new ByteArrayOutputStream();
        Bench.Outcome outcome = Bench.run(options, new PrintStream(new ByteArrayOutputStream(), true,
                StandardCharsets.UTF_8), new PrintStream(progress, true, StandardCharsets.UTF_8));
        String printed = progress.toString(StandardCharsets.UTF_8);
        assertTrue(outcome.allOk(), printed);
        for (String contender : List.of("nio-packed", "rds4j-tcp")) {
            int at = printed.indexOf(contender + " ");
            int table = printed.indexOf("CPU by thread in the throughput phase", at);
            assertTrue(at >= 0 && table > at, printed);
            int end = printed.indexOf("all Java threads", table);
            String lines = printed.substring(table, end);
            // The sender (side A) worked for every message; a quick phase may leave the receiver under the 1 % line.
            assertTrue(lines.contains("bench-" + contender + "-a"), printed);
            // Then what each thread allocated in the same phase, before the next cell.
            int alloc = printed.indexOf("bytes allocated by thread in the throughput phase", end);
            int next = printed.indexOf("bench: run", end);
            assertTrue(alloc > end && (next < 0 || alloc < next), printed);
            // And the stack counters that moved, for rds4j only: every message queued by side A, delivered by B.
            String cell = printed.substring(at, next < 0 ? printed.length() : next);
            int counters = cell.indexOf("counters that moved in the throughput phase");
            if (contender.startsWith("rds4j")) {
                String quick = String.format(Locale.ROOT, "%,d", Settings.QUICK_COUNT);
                assertTrue(counters > 0, printed);
                assertTrue(cell.matches("(?s).*\\n    a send_queued +" + quick + " +1\\.0000\\n.*"), cell);
                assertTrue(cell.matches("(?s).*\\n    b recv_delivered +" + quick + " +1\\.0000\\n.*"), cell);
            } else {
                assertTrue(counters < 0, cell);
            }
        }
    }

    /** This machine's placement, or the calling test is skipped (not Linux, no taskset, fewer than two CPUs). */
    private static ThreadPlacement placementOrSkip() {
        try {
            return ThreadPlacement.onThisMachine();
        } catch (IllegalStateException e) {
            assumeTrue(false, "placement not possible here: " + e.getMessage());
            throw e;                                // not reached: the assumption aborts the test
        }
    }
}
