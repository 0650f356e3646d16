package org.rds4j.core.path;

import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * Whether an up path's peer is still there (docs/reliability.md): silent for half the liveness interval, the path
 * pings; silent for all of it, the path drops the connection and reconnects. Also owns the path's periodic
 * maintenance task, which runs these checks and the acknowledgement fallback. Used by the path's owner, its connection's I/O thread.
 */
final class Liveness {
    static final long MAINTENANCE_PERIOD_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

    /** What the peer's silence calls for. */
    enum Verdict { ALIVE, PING, DEAD }

    private final ConnectionEnvironment env;
    /** The liveness interval in nanoseconds, 0 for none. */
    private final long intervalNanos;
    private long lastHeardNanos;
    private long lastPingNanos;
    private ScheduledFuture<?> task;

    Liveness(ConnectionEnvironment env) {
        this.env = env;
        this.intervalNanos = env.livenessNanos();
    }

    /** The path came up: silence counts from now, and maintenance runs every period until {@link #stop}. */
    void start(long nowNanos, Runnable maintain) {
        stop();
        lastHeardNanos = nowNanos;
        lastPingNanos = nowNanos;
        long period = intervalNanos > 0 ? Math.min(MAINTENANCE_PERIOD_NANOS, intervalNanos / 4)
                : MAINTENANCE_PERIOD_NANOS;
        try {
            task = env.scheduler().scheduleWithFixedDelay(maintain, period, period, TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            task = null;                              // the stack is closing
        }
    }

    void stop() {
        if (task != null) {
            task.cancel(false);
            task = null;
        }
    }

    /** Bytes arrived from the peer. */
    void heard(long nowNanos) {
        lastHeardNanos = nowNanos;
    }

    /** How long the peer has been silent. */
    long silentNanos(long nowNanos) {
        return nowNanos - lastHeardNanos;
    }

    /** What to do now: nothing, ping (at most once per half interval), or drop the connection. */
    Verdict check(long nowNanos) {
        if (intervalNanos <= 0) {
            return Verdict.ALIVE;
        }
        long silent = nowNanos - lastHeardNanos;
        if (silent >= intervalNanos) {
            return Verdict.DEAD;
        }
        if (silent >= intervalNanos / 2 && nowNanos - lastPingNanos >= intervalNanos / 2) {
            lastPingNanos = nowNanos;
            return Verdict.PING;
        }
        return Verdict.ALIVE;
    }
}
