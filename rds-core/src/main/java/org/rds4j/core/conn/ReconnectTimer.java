package org.rds4j.core.conn;

import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * When a path that is down tries again: the kernel's reconnect delay, with {@link ReconnectBackoff}'s jittered
 * exponential growth, reset each time a connection proves itself ({@link #proven}).
 *
 * <p>A scheduled attempt carries a token. The token is set before the task can run (a first reconnect runs at once,
 * on another thread) and the path checks it under its monitor ({@link #claim}), so an attempt cancelled by the path
 * coming up is recognised even if its task already started. Guarded by the owning path's monitor.
 */
final class ReconnectTimer {
    private final ConnectionEnvironment env;
    private final ReconnectBackoff backoff;
    private boolean pending;
    private ScheduledFuture<?> task;
    private Object token;

    ReconnectTimer(ConnectionEnvironment env) {
        this.env = env;
        this.backoff = new ReconnectBackoff(env.reconnectMinNanos(), env.reconnectMaxNanos(), env::random);
    }

    /** Whether an attempt is scheduled. */
    boolean pending() {
        return pending;
    }

    /** Schedules an attempt after the next backoff delay, unless one is pending; {@code fire} gets its token. */
    void schedule(Consumer<Object> fire) {
        if (pending) {
            return;
        }
        long delay = backoff.nextDelayNanos();
        pending = true;
        Object t = new Object();
        token = t;
        try {
            task = env.scheduler().schedule(() -> fire.accept(t), delay, TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            pending = false;                         // the stack is closing
            token = null;
        }
    }

    /** An attempt's task runs: true if it is still the current one (and no longer pending). */
    boolean claim(Object t) {
        if (t != token) {
            return false;                            // cancelled: the path came up meanwhile
        }
        token = null;
        task = null;
        pending = false;
        return true;
    }

    /**
     * The backoff starts small again: a connection proved itself (the peer sent on it, or it lasted). Not on every
     * connect: a peer that accepts and at once resets (a 6.1 kernel with no free path for it) must meet a growing
     * delay, not a storm of connections.
     */
    void proven() {
        backoff.reset();
    }

    /** The path is up, or connects now: an attempt still pending from before is moot. */
    void cancel() {
        if (task != null) {
            task.cancel(false);
            task = null;
        }
        token = null;
        pending = false;
    }
}
