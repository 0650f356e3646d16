package org.rds4j.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class AllocationMeterTest {

    @Test
    void byThreadNamesEachThreadThatAllocatedTheMostFirst() {
        Map<Long, Long> before = Map.of(1L, 1_000L, 2L, 5_000L, 3L, 7_000L, 4L, 9_000L);
        Map<Long, Long> after = Map.of(1L, 1_000L, 2L, 595_000L, 3L, 7_064L, 5L, 40L, 6L, 128L);
        Map<Long, ThreadCpuMeter.ThreadCpu> names = Map.of(
                1L, new ThreadCpuMeter.ThreadCpu("idle", 0),
                2L, new ThreadCpuMeter.ThreadCpu("rds4j-bench-a-loop", 0),
                3L, new ThreadCpuMeter.ThreadCpu("bench-a", 0),
                5L, new ThreadCpuMeter.ThreadCpu("born", 0));
        // A thread born within the phase counts whole; one that allocated nothing, or ended, is not listed; an id
        // the names lack shows as a number.
        assertEquals(List.of(new AllocationMeter.ThreadBytes("rds4j-bench-a-loop", 590_000),
                new AllocationMeter.ThreadBytes("thread 6", 128),
                new AllocationMeter.ThreadBytes("bench-a", 64),
                new AllocationMeter.ThreadBytes("born", 40)), AllocationMeter.byThread(before, after, names));
    }

    @Test
    void theCoordinatingThreadIsLeftOutOfTheSumAndTheList() {
        long me = Thread.currentThread().getId();
        long other = me + 1;
        Map<Long, Long> before = Map.of(me, 1_000L, other, 2_000L);
        Map<Long, Long> after = Map.of(me, 9_000L, other, 2_500L);
        assertEquals(500, AllocationMeter.allocatedBetween(before, after));
        assertEquals(List.of(new AllocationMeter.ThreadBytes("worker", 500)), AllocationMeter.byThread(before, after,
                Map.of(me, new ThreadCpuMeter.ThreadCpu("main", 0), other, new ThreadCpuMeter.ThreadCpu("worker", 0))));
    }

    @Test
    void describeGivesBytesAndBytesPerMessage() {
        List<String> lines = AllocationMeter.describe(List.of(
                new AllocationMeter.ThreadBytes("rds4j-bench-a-loop", 590_000),
                new AllocationMeter.ThreadBytes("bench-a", 64)), 10_000);
        assertEquals(3, lines.size(), String.join("\n", lines));
        assertTrue(lines.get(1).contains("rds4j-bench-a-loop") && lines.get(1).contains("590,000")
                && lines.get(1).endsWith(" 59.00"), lines.get(1));
        assertTrue(lines.get(2).endsWith(" 0.01"), lines.get(2));
        assertEquals(List.of("  bytes allocated by thread in the throughput phase: none"),
                AllocationMeter.describe(List.of(), 10_000));
        assertEquals(List.of(), AllocationMeter.describe(List.of(), 0));
    }
}
