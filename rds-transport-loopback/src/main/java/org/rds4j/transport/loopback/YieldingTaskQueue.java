package org.rds4j.transport.loopback;

import java.util.concurrent.ArrayBlockingQueue;

/**
 * The loopback thread's task queue: a thread that finds it empty keeps yielding and looking for {@code yieldNanos}
 * before it parks, for the same reason as the TCP transport's I/O threads (a task that comes within that time finds
 * the thread awake and costs no wake-up; a yielding thread lets every thread with work run first). An interrupt (the
 * executor's shutdown) ends the wait as it ends {@link #take()}'s.
 */
final class YieldingTaskQueue extends ArrayBlockingQueue<Runnable> {
    private static final long serialVersionUID = 1L;

    private final long yieldNanos;

    YieldingTaskQueue(int capacity, long yieldNanos) {
        super(capacity);
        if (yieldNanos < 0) {
            throw new IllegalArgumentException("yieldNanos must be at least 0, was " + yieldNanos);
        }
        this.yieldNanos = yieldNanos;
    }

    @Override
    public Runnable take() throws InterruptedException {
        Runnable task = poll();
        if (task != null || yieldNanos == 0) {
            return task != null ? task : super.take();
        }
        long start = System.nanoTime();
        do {
            if (Thread.interrupted()) {
                throw new InterruptedException();
            }
            Thread.yield();
            task = poll();
            if (task != null) {
                return task;
            }
        } while (System.nanoTime() - start < yieldNanos);
        return super.take();
    }
}
