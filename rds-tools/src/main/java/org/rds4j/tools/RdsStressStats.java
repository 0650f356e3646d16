package org.rds4j.tools;

import java.util.concurrent.atomic.AtomicLongArray;

/**
 * One rds-stress task's counters: for each statistic a count and a sum, written by the task's thread only and read
 * once a second by the reporter. The message counts are rds-stress's: requests and acks sent and received (their
 * bytes as sums), the time each send call took and each request's round trip (nanoseconds as sums).
 */
final class RdsStressStats {
    static final int REQ_TX = 0;
    static final int REQ_RX = 1;
    static final int ACK_TX = 2;
    static final int ACK_RX = 3;
    static final int SEND_NANOS = 4;
    static final int RTT_NANOS = 5;
    static final int COUNT = 6;
    /** Round-trip buckets of the histogram: bucket b holds [2^b, 2^(b+1)) microseconds, bucket 0 also 0. */
    static final int BUCKETS = 16;

    private final AtomicLongArray nr = new AtomicLongArray(COUNT);
    private final AtomicLongArray sum = new AtomicLongArray(COUNT);
    private final AtomicLongArray histogram = new AtomicLongArray(BUCKETS);

    /** Adds one event of {@code stat}; only the task's thread calls it, so plain ordered writes suffice. */
    void add(int stat, long value) {
        nr.lazySet(stat, nr.get(stat) + 1);
        sum.lazySet(stat, sum.get(stat) + value);
    }

    void roundTrip(long nanos, boolean histogramOn) {
        add(RTT_NANOS, nanos);
        if (histogramOn) {
            int b = bucket(nanos / 1000);
            if (b < BUCKETS) {
                histogram.lazySet(b, histogram.get(b) + 1);
            }
        }
    }

    /** rds-stress's bucket: the index of the highest set bit of the microseconds, 0 for 0. */
    static int bucket(long micros) {
        return micros <= 0 ? 0 : 63 - Long.numberOfLeadingZeros(micros);
    }

    long nr(int stat) {
        return nr.get(stat);
    }

    long sum(int stat) {
        return sum.get(stat);
    }

    long bucketCount(int b) {
        return histogram.get(b);
    }
}
