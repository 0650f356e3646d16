package org.rds4j.core.stack;

import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;
import org.rds4j.core.spi.IoThread;

/**
 * The I/O thread of rds-core's in-process test transports: one real thread, as a transport has, on which the test's
 * calls into the core's handlers run ({@link #run}, {@link #get}) and the core's own tasks too, so that the core's
 * owner checks hold as they do over TCP.
 */
final class TestIoThread implements IoThread, AutoCloseable {
    private static final long WAIT_SECONDS = 30;

    private final ExecutorService executor;
    private volatile Thread thread;

    TestIoThread(String name) {
        this.executor = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, name);
            t.setDaemon(true);
            thread = t;
            return t;
        });
        get(() -> null);                                 // starts the thread, so that inThread can tell
    }

    @Override
    public boolean inThread() {
        return Thread.currentThread() == thread;
    }

    @Override
    public void execute(Runnable task) {
        executor.execute(task);
    }

    /** Runs {@code action} on this thread and waits for it, as a transport's thread calls a handler. */
    void run(Runnable action) {
        get(() -> {
            action.run();
            return null;
        });
    }

    /** Computes {@code action} on this thread and returns its result; at once when already on it. */
    <T> T get(Supplier<T> action) {
        if (inThread()) {
            return action.get();
        }
        Future<T> f = executor.submit(action::get);
        try {
            return f.get(WAIT_SECONDS, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while the test's I/O thread ran a call", e);
        } catch (TimeoutException e) {
            throw new IllegalStateException("the test's I/O thread did not finish a call within " + WAIT_SECONDS
                    + " s", e);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof RuntimeException) {
                throw (RuntimeException) cause;
            }
            if (cause instanceof Error) {
                throw (Error) cause;
            }
            throw new IllegalStateException(cause);
        }
    }

    @Override
    public void close() {
        executor.shutdown();
    }
}
