package org.rds4j.core.path;

import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * When a path that is down tries again: the kernel's reconnect delay, with {@link ReconnectBackoff}'s jittered
 * exponential growth, reset each time a connection comes up, unless too many in a row failed to prove themselves
 * ({@link #up}).
 *
 * <p>A scheduled attempt carries a token. The token is set before the task can run (a first reconnect runs at once,
 * on the timer thread) and the path checks it on its owner ({@link #claim}), so an attempt cancelled by the path
 * coming up is recognised even if its task was already handed over. The path's owner uses it; the timer only
 * hands attempts over.
 */
final class ReconnectTimer {
    private final ConnectionEnvironment env;
    private final ReconnectBackoff backoff;
    private boolean pending;
    private ScheduledFuture<?> task;
    private Object token;
    /** Connections in a row that closed before they proved themselves. */
    private int unproven;
    /** How many unproven connections in a row still restart the backoff when they come up. */
    static final int QUICK_RETRIES = 1024;

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
     * A connection came up. The next attempt after losing it is at once again, as in the kernel, unless the last
     * {@link #QUICK_RETRIES} connections in a row were all closed before they proved themselves: then the delay
     * keeps growing. A 6.12 kernel can kill what it accepts on a path many times in a row while that path's old
     * connection is still being torn down (a few hundred times within 3 s in scenario 6b), and only quick retries get
     * through; a peer that refuses everything (a kernel that remembers 8 paths from an earlier peer at this address,
     * pokes on its path 0 and resets the rest) must not get connections at full speed forever.
     */
    void up() {
        cancel();
        if (unproven < QUICK_RETRIES) {
            backoff.reset();
        }
        unproven++;
    }

    /** The connection that closed proved itself (the peer sent on it, or it lasted): quick retries again. */
    void proven() {
        unproven = 0;
        backoff.reset();
    }

    /** An attempt still pending from before is moot: the path is up, or connects now. */
    void cancel() {
        if (task != null) {
            task.cancel(false);
            task = null;
        }
        token = null;
        pending = false;
    }
}
