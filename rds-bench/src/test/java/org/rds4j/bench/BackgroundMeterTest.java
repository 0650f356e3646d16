package org.rds4j.bench;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class BackgroundMeterTest {
    private static final long MS = 1_000_000;

    @Test
    void aBatchIsQuietWhenNoCompilationEndedAndTheJvmsThreadsStayedUnderATenthOfACore() {
        BackgroundMeter.Reading before = new BackgroundMeter.Reading(40, 3 * MS, 1_000 * MS);
        assertTrue(BackgroundMeter.quiet(before, new BackgroundMeter.Reading(40, 12 * MS, 1_100 * MS)));
        // 10 ms of the JVM's own CPU in 100 ms is a tenth of a core: no longer quiet.
        assertFalse(BackgroundMeter.quiet(before, new BackgroundMeter.Reading(40, 13 * MS, 1_100 * MS)));
    }

    @Test
    void aCompilationThatEndedMakesTheBatchBusyWhateverTheCpu() {
        BackgroundMeter.Reading before = new BackgroundMeter.Reading(40, 3 * MS, 1_000 * MS);
        assertFalse(BackgroundMeter.quiet(before, new BackgroundMeter.Reading(41, 3 * MS, 1_100 * MS)));
    }

    @Test
    void whatTheJvmCannotTellCountsAsQuiet() {
        assertTrue(BackgroundMeter.quiet(new BackgroundMeter.Reading(-1, -1, 0),
                new BackgroundMeter.Reading(-1, -1, 100 * MS)));
        // The CPU reading alone still decides when the compilers' time is unknown.
        assertFalse(BackgroundMeter.quiet(new BackgroundMeter.Reading(-1, 0, 0),
                new BackgroundMeter.Reading(-1, 50 * MS, 100 * MS)));
    }

    /**
     * A full collection runs on the collector's threads, which are not Java threads: the meter must see their CPU
     * as the JVM's own. With a few million live objects to mark and move, the collection keeps those threads busy
     * for most of its time, well above a tenth of a core.
     */
    @Test
    void aFullCollectionIsTheJvmsOwnWork() {
        BackgroundMeter.Reading before = BackgroundMeter.read();
        assumeTrue(before.backgroundCpuNanos() >= 0, "this JVM cannot tell its threads' CPU time");
        List<Object[]> live = new ArrayList<>();
        for (int i = 0; i < 20_000; i++) {
            Object[] node = new Object[100];
            for (int j = 0; j < node.length; j++) {
                node[j] = new int[4];
            }
            live.add(node);
        }
        before = BackgroundMeter.read();
        System.gc();
        BackgroundMeter.Reading after = BackgroundMeter.read();
        long background = after.backgroundCpuNanos() - before.backgroundCpuNanos();
        assertTrue(background > 0, "the collection's CPU time did not show: " + background + " ns");
        assertFalse(BackgroundMeter.quiet(new BackgroundMeter.Reading(-1, before.backgroundCpuNanos(),
                        before.wallNanos()), new BackgroundMeter.Reading(-1, after.backgroundCpuNanos(),
                        after.wallNanos())),
                "background " + background + " ns in " + (after.wallNanos() - before.wallNanos()) + " ns of wall time");
        assertTrue(live.size() == 20_000);
    }
}
