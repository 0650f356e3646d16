package org.rds4j.core.path;

import java.util.function.LongUnaryOperator;

/**
 * The kernel's reconnect delay: the first reconnect after a path went up is immediate; each later one waits a
 * uniformly random time below a ceiling that starts at the minimum and doubles up to the maximum. The ceiling is
 * reset when the path comes up. Randomness keeps two hosts that lost each other at the same moment from
 * reconnecting in lock step.
 */
public final class ReconnectBackoff {
    private final long minNanos;
    private final long maxNanos;
    private final LongUnaryOperator random;
    private long ceilingNanos;

    /**
     * A backoff whose first reconnect is immediate.
     *
     * @param minNanos the first ceiling in nanoseconds, positive
     * @param maxNanos the highest ceiling in nanoseconds, at least {@code minNanos}
     * @param random given a bound {@code n > 0}, returns a value in {@code [0, n)}
     * @throws IllegalArgumentException if {@code minNanos} is not positive or {@code maxNanos} is below it
     */
    public ReconnectBackoff(long minNanos, long maxNanos, LongUnaryOperator random) {
        if (minNanos <= 0 || maxNanos < minNanos) {
            throw new IllegalArgumentException("need 0 < min <= max");
        }
        this.minNanos = minNanos;
        this.maxNanos = maxNanos;
        this.random = random;
    }

    /**
     * The delay before the next connection attempt, advancing the ceiling.
     *
     * @return the delay in nanoseconds, 0 for the first attempt after a reset
     */
    public long nextDelayNanos() {
        if (ceilingNanos == 0) {
            ceilingNanos = minNanos;
            return 0;
        }
        long delay = random.applyAsLong(ceilingNanos);
        ceilingNanos = ceilingNanos > maxNanos / 2 ? maxNanos : ceilingNanos * 2;   // no overflow near Long.MAX_VALUE
        return delay;
    }

    /** The path came up: the next reconnect is immediate again. */
    public void reset() {
        ceilingNanos = 0;
    }

    /**
     * The current ceiling (0 before the first delay).
     *
     * @return the ceiling in nanoseconds
     */
    public long ceilingNanos() {
        return ceilingNanos;
    }
}
