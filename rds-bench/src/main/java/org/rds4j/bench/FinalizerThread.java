package org.rds4j.bench;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * The JVM's finalizer thread, watched so that no finalizer runs inside a measured phase: what it allocates and the CPU
 * it takes there would be charged to the cell (see {@link CellRunner}'s settling between warm-up and phase).
 *
 * <p>The thread is busy while {@code java.lang.ref.Finalizer.runFinalizer} is on its stack, and otherwise waits on its
 * queue. That is read from its stack rather than its state: a finalizer that waits (on a lock, say) leaves the thread
 * in the same state as an empty queue does.
 */
final class FinalizerThread {
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();
    private static final String NAME = "Finalizer";
    private static final String RUNNING = "runFinalizer";
    private static final int STACK_DEPTH = 64;
    /** How often a busy finalizer thread is looked at again. */
    private static final long POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

    private FinalizerThread() {
    }

    /**
     * Waits until the finalizer thread runs no finalizer, for at most {@code timeoutNanos}. Allocates: call it
     * outside a measured phase.
     *
     * @return whether it was idle (or this JVM has no such thread) before the time ran out
     */
    static boolean awaitIdle(long timeoutNanos) {
        long deadline = System.nanoTime() + timeoutNanos;
        while (busy()) {
            if (System.nanoTime() - deadline >= 0) {
                return false;
            }
            LockSupport.parkNanos(POLL_NANOS);
        }
        return true;
    }

    private static boolean busy() {
        for (ThreadInfo t : THREADS.getThreadInfo(THREADS.getAllThreadIds(), STACK_DEPTH)) {
            if (t != null && NAME.equals(t.getThreadName())) {
                for (StackTraceElement e : t.getStackTrace()) {
                    if (RUNNING.equals(e.getMethodName()) && "java.lang.ref.Finalizer".equals(e.getClassName())) {
                        return true;
                    }
                }
                return false;
            }
        }
        return false;
    }
}
