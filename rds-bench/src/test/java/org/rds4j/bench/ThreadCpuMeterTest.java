package org.rds4j.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.lang.management.ManagementFactory;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ThreadCpuMeterTest {

    @Test
    void betweenCountsEachThreadsDifferenceBusiestFirst() {
        Map<Long, ThreadCpuMeter.ThreadCpu> before = Map.of(
                1L, new ThreadCpuMeter.ThreadCpu("io", 1_000),
                2L, new ThreadCpuMeter.ThreadCpu("sender", 5_000),
                3L, new ThreadCpuMeter.ThreadCpu("idle", 7_000),
                4L, new ThreadCpuMeter.ThreadCpu("ended", 9_000));
        Map<Long, ThreadCpuMeter.ThreadCpu> after = Map.of(
                1L, new ThreadCpuMeter.ThreadCpu("io", 801_000),
                2L, new ThreadCpuMeter.ThreadCpu("sender", 305_000),
                3L, new ThreadCpuMeter.ThreadCpu("idle", 7_000),
                5L, new ThreadCpuMeter.ThreadCpu("born", 400_000));
        // A thread born within the phase counts whole; one that used nothing, or ended, is not listed.
        assertEquals(List.of(new ThreadCpuMeter.ThreadCpu("io", 800_000),
                new ThreadCpuMeter.ThreadCpu("born", 400_000),
                new ThreadCpuMeter.ThreadCpu("sender", 300_000)), ThreadCpuMeter.between(before, after));
    }

    @Test
    void describeGivesSharesOfACoreAndNanosPerMessageAndSumsTheSmallOnes() {
        List<ThreadCpuMeter.ThreadCpu> threads = List.of(new ThreadCpuMeter.ThreadCpu("rds4j-a-tcp-0", 600_000_000),
                new ThreadCpuMeter.ThreadCpu("bench-a", 300_000_000), new ThreadCpuMeter.ThreadCpu("C2", 5_000_000),
                new ThreadCpuMeter.ThreadCpu("GC", 4_000_000));
        List<String> lines = ThreadCpuMeter.describe(threads, 1_000_000_000, 1_000_000, 1_000_000_000);
        assertEquals(7, lines.size(), String.join("\n", lines));
        assertTrue(lines.get(0).contains("1.00 s, 1,000,000 messages"), lines.get(0));
        // 0.6 s of CPU in a 1 s phase is 60 % of a core; over a million messages, 600 ns each.
        assertTrue(lines.get(1).matches(" +rds4j-a-tcp-0 +60\\.0 % +600\\.0"), lines.get(1));
        assertTrue(lines.get(2).matches(" +bench-a +30\\.0 % +300\\.0"), lines.get(2));
        assertTrue(lines.get(3).matches(" +2 more threads +0\\.9 % +9\\.0"), lines.get(3));
        assertTrue(lines.get(4).matches(" +all Java threads +90\\.9 % +909\\.0"), lines.get(4));
        // The process used 1 s: the 0.091 s the Java threads do not account for is the JVM's own threads'.
        assertTrue(lines.get(5).matches(" +GC, JIT and ended threads +9\\.1 % +91\\.0"), lines.get(5));
        assertTrue(lines.get(6).matches(" +process +100\\.0 % +1000\\.0"), lines.get(6));
        // Without the process's figure, only the threads.
        assertEquals(5, ThreadCpuMeter.describe(threads, 1_000_000_000, 1_000_000, -1).size());
        assertTrue(ThreadCpuMeter.describe(List.of(), 1, 1, -1).get(0).contains("not measured"));
    }

    /** The meter reads the JVM's own counters: a thread that burns CPU between two snapshots is found with it. */
    @Test
    void aBusyThreadIsFoundWithTheCpuItUsed() {
        assumeTrue(ManagementFactory.getThreadMXBean().isThreadCpuTimeSupported(), "no thread CPU time here");
        Map<Long, ThreadCpuMeter.ThreadCpu> before = ThreadCpuMeter.snapshot();
        long mine = ManagementFactory.getThreadMXBean().getCurrentThreadCpuTime();
        long x = 0;
        // Bounded: at most 10 s of wall time, normally 20 ms of this thread's CPU.
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (ManagementFactory.getThreadMXBean().getCurrentThreadCpuTime() - mine < 20_000_000
                && System.nanoTime() < deadline) {
            x += x * 31 + 7;
        }
        long burned = ManagementFactory.getThreadMXBean().getCurrentThreadCpuTime() - mine;
        long result = x;                            // used below, so the loop is not optimised away
        List<ThreadCpuMeter.ThreadCpu> used = ThreadCpuMeter.between(before, ThreadCpuMeter.snapshot());
        String me = Thread.currentThread().getName();
        ThreadCpuMeter.ThreadCpu found = used.stream().filter(t -> t.name().equals(me)).findFirst().orElse(null);
        assertTrue(found != null, () -> me + " not among " + used + " (" + result + ")");
        assertTrue(found.cpuNanos() >= burned, found + " against " + burned + " ns burned");
    }
}
