package org.rds4j.transport.tcp;

import java.util.concurrent.atomic.AtomicLong;

/**
 * At most one log line per interval, from any thread, with a count of the lines held back since the last one. The
 * first caller whose clock has reached the next slot takes it by compare-and-set; every other caller is counted, and
 * the line that takes the next slot carries the count. A caller counted just after a line took the count goes with
 * the line after: none is lost, none counted twice.
 */
final class LogRateLimit {
    /** Returned by {@link #admit} when the line is held back. */
    static final long HELD_BACK = -1;

    private final long intervalNanos;
    private final AtomicLong nextLogNanos = new AtomicLong(Long.MIN_VALUE);
    private final AtomicLong suppressed = new AtomicLong();

    LogRateLimit(long intervalNanos) {
        this.intervalNanos = intervalNanos;
    }

    /**
     * Whether a line may be logged at {@code now}.
     *
     * @param now {@link System#nanoTime}
     * @return {@link #HELD_BACK} if not (the line is counted), else the lines held back since the last one logged
     */
    long admit(long now) {
        long next = nextLogNanos.get();
        if ((next == Long.MIN_VALUE || now - next >= 0) && nextLogNanos.compareAndSet(next, now + intervalNanos)) {
            return suppressed.getAndSet(0);
        }
        suppressed.incrementAndGet();
        return HELD_BACK;
    }

    /** Lines held back and not yet carried by a logged line. */
    long heldBack() {
        return suppressed.get();
    }
}
