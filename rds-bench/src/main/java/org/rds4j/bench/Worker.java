package org.rds4j.bench;

import java.util.concurrent.Callable;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * A named thread that runs the harness's tasks for one side of a cell, one after another. It lives for the whole
 * cell, warm-up and every measured phase, for a reason beyond saving thread starts: the allocation meter reads each
 * live thread's allocation counter before and after a phase, and a thread that ended within the phase would take its
 * allocations with it.
 *
 * <p>A plain {@link ThreadPoolExecutor}, not {@code Executors.newSingleThreadExecutor}: the JDK wraps the latter in
 * an object with a finalizer, which the JVM's finalizer thread would run (allocating) in a later cell's measured
 * phase once a collection found it unreachable.
 */
final class Worker implements AutoCloseable {
    private final ThreadPoolExecutor executor;

    Worker(String name) {
        this.executor = new ThreadPoolExecutor(1, 1, 0, TimeUnit.MILLISECONDS, new LinkedBlockingQueue<>(), r -> {
            Thread t = new Thread(r, name);
            // A task stuck despite every bound must not keep the JVM alive after the report.
            t.setDaemon(true);
            return t;
        });
    }

    <T> Future<T> submit(Callable<T> task) {
        return executor.submit(task);
    }

    /** Interrupts a running task and waits, bounded, for the thread to end. */
    @Override
    public void close() {
        executor.shutdownNow();
        try {
            executor.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
