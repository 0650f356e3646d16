package org.rds4j.core.path;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.Callable;
import java.util.concurrent.Delayed;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * A {@link ScheduledExecutorService} on virtual time for tests: nothing runs by itself. Tasks wait in a list until the
 * test advances the clock and runs what is due ({@link #runNext}, {@link #advanceBy}), on the test's thread.
 */
final class VirtualScheduler extends AbstractExecutorService implements ScheduledExecutorService {

    /** One scheduled task; {@code delayNanos} is the delay it was scheduled with, for assertions. */
    final class Task implements ScheduledFuture<Object> {
        final Runnable body;
        final long delayNanos;
        final long periodNanos;
        final long seq;
        long dueNanos;
        boolean cancelled;
        boolean done;

        Task(Runnable body, long delayNanos, long periodNanos) {
            this.body = body;
            this.delayNanos = delayNanos;
            this.periodNanos = periodNanos;
            this.dueNanos = now + Math.max(0, delayNanos);
            this.seq = nextSeq++;
        }

        @Override
        public long getDelay(TimeUnit unit) {
            return unit.convert(dueNanos - now, TimeUnit.NANOSECONDS);
        }

        @Override
        public int compareTo(Delayed o) {
            return Long.compare(getDelay(TimeUnit.NANOSECONDS), o.getDelay(TimeUnit.NANOSECONDS));
        }

        @Override
        public boolean cancel(boolean mayInterruptIfRunning) {
            if (done || cancelled) {
                return false;
            }
            cancelled = true;
            tasks.remove(this);
            return true;
        }

        @Override
        public boolean isCancelled() {
            return cancelled;
        }

        @Override
        public boolean isDone() {
            return done || cancelled;
        }

        @Override
        public Object get() {
            throw new UnsupportedOperationException("virtual time: nothing blocks");
        }

        @Override
        public Object get(long timeout, TimeUnit unit) {
            throw new UnsupportedOperationException("virtual time: nothing blocks");
        }

        @Override
        public String toString() {
            return "Task[due=" + dueNanos + ", delay=" + delayNanos + (periodNanos > 0 ? ", period=" + periodNanos : "")
                    + "]";
        }
    }

    private final List<Task> tasks = new ArrayList<>();
    /** Every task ever scheduled, in order, cancelled or not. */
    private final List<Task> history = new ArrayList<>();
    private long now;
    private long nextSeq;
    private boolean shutdown;

    long now() {
        return now;
    }

    /** Tasks waiting to run (not cancelled, not done). */
    List<Task> pending() {
        List<Task> l = new ArrayList<>(tasks);
        l.sort(ORDER);
        return l;
    }

    List<Task> history() {
        return history;
    }

    private static final Comparator<Task> ORDER =
            Comparator.<Task>comparingLong(t -> t.dueNanos).thenComparingLong(t -> t.seq);

    /** Advances the clock to the earliest pending task and runs it (only it); returns it, or null if none. */
    Task runOne() {
        if (tasks.isEmpty()) {
            return null;
        }
        Task next = pending().get(0);
        now = Math.max(now, next.dueNanos);
        tasks.remove(next);
        if (next.periodNanos > 0) {
            next.dueNanos = now + next.periodNanos;
            tasks.add(next);
        } else {
            next.done = true;
        }
        next.body.run();
        return next;
    }

    /** Advances the clock to the earliest pending task and runs every task due then; returns how many ran. */
    int runNext() {
        if (tasks.isEmpty()) {
            return 0;
        }
        long due = pending().get(0).dueNanos;
        return advanceTo(due);
    }

    /** Advances the clock by {@code nanos}, running every task that falls due on the way, in due order. */
    int advanceBy(long nanos) {
        return advanceTo(now + nanos);
    }

    private int advanceTo(long target) {
        int ran = 0;
        while (true) {
            Task next = null;
            for (Task t : tasks) {
                if (t.dueNanos <= target && (next == null || ORDER.compare(t, next) < 0)) {
                    next = t;
                }
            }
            if (next == null) {
                break;
            }
            now = Math.max(now, next.dueNanos);
            tasks.remove(next);
            if (next.periodNanos > 0) {
                next.dueNanos = now + next.periodNanos;
                tasks.add(next);
            } else {
                next.done = true;
            }
            next.body.run();
            ran++;
        }
        now = Math.max(now, target);
        return ran;
    }

    private Task add(Runnable r, long delay, long period, TimeUnit unit) {
        if (shutdown) {
            throw new RejectedExecutionException("shut down");
        }
        Task t = new Task(r, unit.toNanos(delay), unit.toNanos(period));
        tasks.add(t);
        history.add(t);
        return t;
    }

    @Override
    public ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
        return add(command, delay, 0, unit);
    }

    @Override
    public <V> ScheduledFuture<V> schedule(Callable<V> callable, long delay, TimeUnit unit) {
        throw new UnsupportedOperationException("not needed by connection paths");
    }

    @Override
    public ScheduledFuture<?> scheduleAtFixedRate(Runnable command, long initialDelay, long period, TimeUnit unit) {
        if (period <= 0) {
            throw new IllegalArgumentException("period " + period);
        }
        return add(command, initialDelay, period, unit);
    }

    @Override
    public ScheduledFuture<?> scheduleWithFixedDelay(Runnable command, long initialDelay, long delay, TimeUnit unit) {
        return scheduleAtFixedRate(command, initialDelay, delay, unit);
    }

    @Override
    public void execute(Runnable command) {
        add(command, 0, 0, TimeUnit.NANOSECONDS);
    }

    @Override
    public void shutdown() {
        shutdown = true;
    }

    @Override
    public List<Runnable> shutdownNow() {
        shutdown = true;
        List<Runnable> l = new ArrayList<>();
        for (Task t : tasks) {
            l.add(t.body);
        }
        tasks.clear();
        return l;
    }

    @Override
    public boolean isShutdown() {
        return shutdown;
    }

    @Override
    public boolean isTerminated() {
        return shutdown && tasks.isEmpty();
    }

    @Override
    public boolean awaitTermination(long timeout, TimeUnit unit) {
        return isTerminated();
    }
}
