package org.rds4j.transport.tcp;

import io.netty.util.concurrent.FastThreadLocal;

/**
 * The tasks an I/O thread that yields before it sleeps owes at a deadline: transmit passes
 * ({@link TcpConnection#requestTransmitAfter}), which the core asks for when an acknowledgement may wait for a reply to
 * carry it, and under tcp.callerIo the check of a path's reading lease. The thread's {@link BackoffSelectStrategy}
 * runs those due at every turn of the loop and does not let the thread sleep while one waits, so a deadline costs
 * no timer and nothing is allocated per request (the arrays grow to the most connections that ever waited at once).
 *
 * <p>Used only by its event loop's thread, which finds it through a thread-local the strategy sets.
 */
final class DeferredTransmits {
    private static final FastThreadLocal<DeferredTransmits> OF_THREAD = new FastThreadLocal<>();

    private Runnable[] tasks = new Runnable[8];
    private long[] deadlines = new long[8];
    private int count;
    /** The earliest deadline of those waiting; meaningless while none waits. */
    private long earliest;

    /**
     * The calling event loop thread's deadlines, or {@code null} if its loop does not keep them (one that sleeps at
     * once: {@code tcp.yieldMicros=0}, or an NIO loop without caller I/O).
     */
    static DeferredTransmits ofThisThread() {
        return OF_THREAD.getIfExists();
    }

    /** Makes this the calling thread's: its select strategy calls this on the thread's first turn. */
    void register() {
        OF_THREAD.set(this);
    }

    /**
     * {@code task} (a connection's request for a pass) is to run at {@code deadlineNanos} ({@code System.nanoTime()});
     * the caller adds each task at most once until it runs.
     */
    void add(Runnable task, long deadlineNanos) {
        if (count == tasks.length) {
            tasks = java.util.Arrays.copyOf(tasks, count * 2);
            deadlines = java.util.Arrays.copyOf(deadlines, count * 2);
        }
        if (count == 0 || deadlineNanos - earliest < 0) {
            earliest = deadlineNanos;
        }
        tasks[count] = task;
        deadlines[count] = deadlineNanos;
        count++;
    }

    /** Whether a pass waits for its deadline. */
    boolean pending() {
        return count != 0;
    }

    /**
     * Runs the tasks that are due, each once. A task may not {@link #add} (it would be lost): one that needs another
     * deadline queues a task on the loop that adds it.
     *
     * @param nowNanos {@code System.nanoTime()}
     * @return whether any ran (a connection's pass is then queued on this loop)
     */
    boolean runDue(long nowNanos) {
        if (count == 0 || nowNanos - earliest < 0) {
            return false;
        }
        int kept = 0;
        long next = 0;
        int n = count;
        for (int i = 0; i < n; i++) {
            Runnable t = tasks[i];
            long d = deadlines[i];
            tasks[i] = null;
            if (nowNanos - d >= 0) {
                t.run();
            } else {
                if (kept == 0 || d - next < 0) {
                    next = d;
                }
                tasks[kept] = t;
                deadlines[kept] = d;
                kept++;
            }
        }
        count = kept;
        earliest = next;
        return kept < n;
    }
}
