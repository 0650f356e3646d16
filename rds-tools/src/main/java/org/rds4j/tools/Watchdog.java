package org.rds4j.tools;

import java.util.concurrent.locks.LockSupport;

/**
 * Runs an action once a deadline passes, unless cancelled first. The tools use it to close a socket when their
 * {@code --timeout} expires, which wakes any call blocked on it: the one bound that holds whatever a blocking call
 * waits for (a full send buffer, a congested peer, a missing message).
 */
final class Watchdog implements AutoCloseable {
    private final Thread thread;
    private volatile boolean cancelled;
    private volatile boolean fired;

    private Watchdog(long deadlineNanos, Runnable onExpiry) {
        thread = new Thread(() -> {
            for (long wait; !cancelled && (wait = deadlineNanos - System.nanoTime()) > 0; ) {
                LockSupport.parkNanos(this, wait);
            }
            if (!cancelled) {
                fired = true;
                onExpiry.run();
            }
        }, "rds4j-watchdog");
        thread.setDaemon(true);
    }

    /** Starts a watchdog for {@code deadlineNanos} on the {@link System#nanoTime()} clock. */
    static Watchdog start(long deadlineNanos, Runnable onExpiry) {
        Watchdog w = new Watchdog(deadlineNanos, onExpiry);
        w.thread.start();
        return w;
    }

    /** Whether the deadline passed and the action ran (or is running). */
    boolean fired() {
        return fired;
    }

    /** Cancels the action if it has not started. */
    @Override
    public void close() {
        cancelled = true;
        LockSupport.unpark(thread);
    }
}
