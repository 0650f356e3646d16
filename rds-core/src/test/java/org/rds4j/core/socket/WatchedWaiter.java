package org.rds4j.core.socket;

import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.fail;

import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;

/**
 * A thread that waits inside the code under test with a {@link ReplySpin} window, and the virtual clock that code
 * times its waits with: the window never ends unless the test moves the clock, so a thread that yields when it
 * should park is never seen parked, and one that parks when it should yield is. A thread yielding for its window
 * reads the clock in a loop, which is how the test sees it yield.
 */
final class WatchedWaiter implements LongSupplier {
    static final long PATIENCE_NANOS = TimeUnit.SECONDS.toNanos(10);

    private final AtomicLong now = new AtomicLong(1_000_000);
    private final AtomicLong reads = new AtomicLong();
    private Thread thread;

    /** The virtual clock: counts every reading. */
    @Override
    public long getAsLong() {
        reads.incrementAndGet();
        return now.get();
    }

    void advance(long nanos) {
        now.addAndGet(nanos);
    }

    long clockReads() {
        return reads.get();
    }

    /** Starts {@code task} on a new thread, the one watched from now on; its result or failure. */
    <T> CompletableFuture<T> start(String name, Callable<T> task) {
        CompletableFuture<T> result = new CompletableFuture<>();
        thread = new Thread(() -> {
            try {
                result.complete(task.call());
            } catch (Throwable t) {
                result.completeExceptionally(t);
            }
        }, name);
        thread.start();
        return result;
    }

    void interrupt() {
        thread.interrupt();
    }

    /** Waits until the thread reads the clock in a loop: it yields for {@code what}. */
    void awaitYielding(String what) {
        long before = reads.get();
        await(() -> reads.get() - before > 100, "the waiting thread to yield for " + what + ", reading the clock");
    }

    void awaitParked(String why) {
        await(() -> thread.getState() == Thread.State.WAITING, "the waiting thread to park (" + why + ")");
    }

    /** Watches the thread for a hundred turns of this one: it must not park. */
    void assertNeverParks(String why) {
        for (int i = 0; i < 100; i++) {
            assertNotEquals(Thread.State.WAITING, thread.getState(), "parked although " + why);
            Thread.yield();
        }
    }

    /** For a test's end: a thread still waiting is interrupted and joined. */
    void stop() throws InterruptedException {
        if (thread != null && thread.isAlive()) {
            thread.interrupt();
            thread.join(TimeUnit.NANOSECONDS.toMillis(PATIENCE_NANOS));
        }
    }

    private static void await(BooleanSupplier condition, String what) {
        long deadline = System.nanoTime() + PATIENCE_NANOS;
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                fail("waited 10 s for " + what);
            }
            Thread.yield();
        }
    }
}
