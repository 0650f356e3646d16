package org.rds4j.tools;

import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import org.HdrHistogram.ConcurrentHistogram;
import org.HdrHistogram.Histogram;

/**
 * What the stress workers count, shared with the live reporter and the summary: delivered messages and bytes,
 * round-trip times, and errors. Every update is a lock-free add without allocation; errors, which end the run,
 * may allocate.
 */
final class StressStats {
    /** More detail than this only repeats the first failure. */
    private static final int MAX_DETAILS = 10;
    /**
     * The histogram's range is fixed, so that recording never resizes it (which would allocate); a longer round trip
     * counts as this one in the percentiles, and the exact maximum is kept beside them.
     */
    static final long MAX_TRACKED_NANOS = TimeUnit.SECONDS.toNanos(60);
    /** Three significant digits: a percentile within 0.1 % of the true one, as the benchmark's. */
    private static final int DIGITS = 3;

    private final LongAdder messages = new LongAdder();
    private final LongAdder bytes = new LongAdder();
    private final ConcurrentHistogram roundTrips = new ConcurrentHistogram(MAX_TRACKED_NANOS, DIGITS);
    private final AtomicLong maxRoundTrip = new AtomicLong();
    private final AtomicLong errors = new AtomicLong();
    private final ConcurrentLinkedQueue<String> details = new ConcurrentLinkedQueue<>();
    private final CountDownLatch failed = new CountDownLatch(1);
    private final CountDownLatch firstRoundTrip = new CountDownLatch(1);
    /** Whether the warmup is over: only then do samples count towards the exact maximum. */
    private volatile boolean measuring;

    /** A message arrived intact at either end. */
    void delivered(int length) {
        messages.increment();
        bytes.add(length);
    }

    void roundTrip(long nanos) {
        roundTrips.recordValue(Math.max(0, Math.min(nanos, MAX_TRACKED_NANOS)));
        if (firstRoundTrip.getCount() != 0) {
            firstRoundTrip.countDown();
        }
        if (measuring) {
            long max;
            while (nanos > (max = maxRoundTrip.get()) && !maxRoundTrip.compareAndSet(max, nanos)) {
                // Lost a race with another worker's larger or smaller maximum: read again.
            }
        }
    }

    void error(String detail) {
        if (errors.incrementAndGet() <= MAX_DETAILS) {
            details.add(detail);
        }
        failed.countDown();
    }

    void measuring(boolean on) {
        measuring = on;
    }

    long messages() {
        return messages.sum();
    }

    long bytes() {
        return bytes.sum();
    }

    /**
     * The round trips recorded so far, copied; subtract an earlier copy for those of an interval.
     *
     * @return a copy that recording no longer changes
     */
    Histogram roundTrips() {
        return roundTrips.copy();
    }

    /** An empty histogram of the same range and precision, for an interval with nothing in it. */
    static Histogram emptyRoundTrips() {
        return new Histogram(MAX_TRACKED_NANOS, DIGITS);
    }

    long maxRoundTrip() {
        return maxRoundTrip.get();
    }

    long errors() {
        return errors.get();
    }

    List<String> details() {
        return List.copyOf(details);
    }

    /**
     * Waits for the first echo to come back, at most {@code nanos}: by then both stacks are connected and have started
     * their I/O threads.
     *
     * @return whether one came back
     */
    boolean awaitFirstRoundTrip(long nanos) throws InterruptedException {
        return firstRoundTrip.await(nanos, TimeUnit.NANOSECONDS);
    }

    /** Counted down on the first error, so that the run can stop early instead of waiting out its duration. */
    CountDownLatch failed() {
        return failed;
    }
}
