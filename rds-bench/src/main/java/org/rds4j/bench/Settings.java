package org.rds4j.bench;

import java.util.concurrent.TimeUnit;

/**
 * How long, or how many messages, each phase of a cell runs.
 *
 * @param warmupNanos time spent warming up before the throughput phase (half of it before the round trips)
 * @param durationNanos target length of the throughput phase (the round-trip phase gets half)
 * @param fixedCount messages per throughput phase and round trips per RTT phase, or 0 to size them from the warm-up
 * @param quick a single tiny warm-up, for tests
 */
record Settings(long warmupNanos, long durationNanos, long fixedCount, boolean quick) {
    /** Messages of a warm-up batch (and round trips of the warm-up) in quick mode. */
    static final int QUICK_WARMUP = 20;
    /** Messages and round trips of a quick cell unless {@code --count} says otherwise. */
    static final int QUICK_COUNT = 200;

    static Settings defaults() {
        return new Settings(TimeUnit.MILLISECONDS.toNanos(500), TimeUnit.SECONDS.toNanos(1), 0, false);
    }

    /**
     * The deadline of one phase of {@code messages} messages of {@code size} bytes: generous (a stalled contender is
     * what it catches), and never shorter than a minute.
     */
    long phaseTimeoutNanos(long messages, int size) {
        long perMessage = TimeUnit.MICROSECONDS.toNanos(200) + size * 50L; // 20 MB/s, 5000 msgs/s: far below any
        return TimeUnit.SECONDS.toNanos(60) + Math.min(Long.MAX_VALUE / 4, messages * perMessage);
    }
}
