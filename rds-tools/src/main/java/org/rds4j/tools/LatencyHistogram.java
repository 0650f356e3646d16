package org.rds4j.tools;

import java.util.concurrent.atomic.AtomicLongArray;

/**
 * A log-linear histogram of non-negative values (nanoseconds), safe for many recording threads.
 *
 * <p>Values below 32 get a bucket each; above, every power of two is split into 16 equal buckets, so a reported
 * percentile is within about 6% of the true one, from nanoseconds to centuries, in under 1000 counters. Recording
 * is one atomic increment and allocates nothing, which the stress loop needs; readers take {@link Snapshot}s and
 * subtract them to get the distribution of an interval.
 */
final class LatencyHistogram {
    private static final int SUB_BITS = 4;
    private static final int SUB_BUCKETS = 1 << SUB_BITS;
    /** Enough for Long.MAX_VALUE: 59 shifted ranges of 16 plus the first 16 values. */
    static final int BUCKETS = (64 - SUB_BITS) * SUB_BUCKETS;

    private final AtomicLongArray counts = new AtomicLongArray(BUCKETS);

    void record(long value) {
        counts.incrementAndGet(bucketOf(Math.max(0, value)));
    }

    Snapshot snapshot() {
        long[] copy = new long[BUCKETS];
        for (int i = 0; i < BUCKETS; i++) {
            copy[i] = counts.get(i);
        }
        return new Snapshot(copy);
    }

    static int bucketOf(long value) {
        int magnitude = 63 - Long.numberOfLeadingZeros(value);
        int shift = Math.max(0, magnitude - SUB_BITS);
        return shift * SUB_BUCKETS + (int) (value >>> shift);
    }

    /** The smallest value that lands in {@code bucket}. */
    static long lowestValue(int bucket) {
        int shift = Math.max(0, bucket / SUB_BUCKETS - 1);
        return (long) (bucket - shift * SUB_BUCKETS) << shift;
    }

    /** The largest value that lands in {@code bucket}. */
    static long highestValue(int bucket) {
        int shift = Math.max(0, bucket / SUB_BUCKETS - 1);
        long base = bucket - shift * SUB_BUCKETS;
        // For the very last bucket (32 << 58) wraps to Long.MIN_VALUE, and minus one to Long.MAX_VALUE: exact.
        return ((base + 1) << shift) - 1;
    }

    /** Frozen counts, to read percentiles from. */
    static final class Snapshot {
        private final long[] counts;
        private final long total;

        private Snapshot(long[] counts) {
            this.counts = counts;
            long t = 0;
            for (long c : counts) {
                t += c;
            }
            this.total = t;
        }

        static Snapshot empty() {
            return new Snapshot(new long[BUCKETS]);
        }

        long count() {
            return total;
        }

        /** The counts recorded after {@code earlier} was taken. */
        Snapshot minus(Snapshot earlier) {
            long[] d = new long[BUCKETS];
            for (int i = 0; i < BUCKETS; i++) {
                d[i] = counts[i] - earlier.counts[i];
            }
            return new Snapshot(d);
        }

        /**
         * The value below or at which {@code percent} of the values lie, reported as the middle of its bucket (the
         * least biased guess); 0 when empty.
         */
        long percentile(double percent) {
            if (total == 0) {
                return 0;
            }
            long rank = Math.max(1, (long) Math.ceil(total * percent / 100.0));
            long seen = 0;
            for (int i = 0; i < BUCKETS; i++) {
                seen += counts[i];
                if (seen >= rank) {
                    long lo = lowestValue(i);
                    return lo + (highestValue(i) - lo) / 2;
                }
            }
            return highestValue(BUCKETS - 1);
        }

        /** The upper end of the highest non-empty bucket; 0 when empty. */
        long maxBound() {
            for (int i = BUCKETS - 1; i >= 0; i--) {
                if (counts[i] != 0) {
                    return highestValue(i);
                }
            }
            return 0;
        }
    }
}
