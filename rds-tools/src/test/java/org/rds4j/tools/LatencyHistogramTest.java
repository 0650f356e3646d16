package org.rds4j.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.LongRange;
import org.junit.jupiter.api.Test;

class LatencyHistogramTest {

    @Property
    void everyValueLiesInsideItsBucket(@ForAll @LongRange(min = 0, max = Long.MAX_VALUE) long v) {
        int b = LatencyHistogram.bucketOf(v);
        assertTrue(b >= 0 && b < LatencyHistogram.BUCKETS);
        assertTrue(LatencyHistogram.lowestValue(b) <= v && v <= LatencyHistogram.highestValue(b), "bucket " + b);
        // Log-linear: a bucket is at most 1/16 of its values wide, so percentiles are within about 6%.
        long width = LatencyHistogram.highestValue(b) - LatencyHistogram.lowestValue(b) + 1;
        assertTrue(width <= Math.max(1, LatencyHistogram.lowestValue(b) / 16), "width " + width);
    }

    @Test
    void bucketsTileTheRangeWithoutGaps() {
        assertEquals(0, LatencyHistogram.lowestValue(0));
        for (int b = 1; b < LatencyHistogram.BUCKETS; b++) {
            assertEquals(LatencyHistogram.highestValue(b - 1) + 1, LatencyHistogram.lowestValue(b), "bucket " + b);
        }
        assertEquals(Long.MAX_VALUE, LatencyHistogram.highestValue(LatencyHistogram.BUCKETS - 1));
    }

    @Test
    void percentilesOfAnInterval() {
        LatencyHistogram h = new LatencyHistogram();
        for (int i = 0; i < 100; i++) {
            h.record(1_000_000); // 1 ms, before the interval
        }
        LatencyHistogram.Snapshot before = h.snapshot();
        for (int i = 1; i <= 1000; i++) {
            h.record(i * 1000L);
        }
        LatencyHistogram.Snapshot interval = h.snapshot().minus(before);
        assertEquals(1000, interval.count());
        assertNear(500_000, interval.percentile(50));
        assertNear(990_000, interval.percentile(99));
        assertNear(1_000_000, interval.maxBound());
        assertEquals(0, LatencyHistogram.Snapshot.empty().percentile(50));
    }

    private static void assertNear(long expected, long actual) {
        assertTrue(Math.abs(actual - expected) <= expected / 16, "expected about " + expected + ", got " + actual);
    }
}
