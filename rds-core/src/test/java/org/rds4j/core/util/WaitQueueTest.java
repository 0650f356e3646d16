package org.rds4j.core.util;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** {@link WaitQueue}: waits end by signal, timeout or interrupt, in order, and no signal is lost. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class WaitQueueTest {
    private final ReentrantLock lock = new ReentrantLock();
    private final WaitQueue queue = new WaitQueue();
    private int waitersStarted;

    /** Starts a thread that waits once (up to {@code nanos}); its result says how the wait ended. */
    private CompletableFuture<String> waiter(long nanos) {
        CompletableFuture<String> result = new CompletableFuture<>();
        Thread t = new Thread(() -> {
            lock.lock();
            try {
                queue.await(lock, nanos);
                result.complete(lock.isHeldByCurrentThread() ? "returned" : "returned without the lock");
            } catch (InterruptedException e) {
                result.complete(lock.isHeldByCurrentThread() ? "interrupted" : "interrupted without the lock");
            } catch (Throwable e) {
                result.completeExceptionally(e);
            } finally {
                if (lock.isHeldByCurrentThread()) {
                    lock.unlock();
                }
            }
        }, "wait-queue-test-waiter-" + waitersStarted++);
        t.setDaemon(true);
        t.start();
        return result;
    }

    /** Waits (bounded) until {@code n} threads wait in the queue. */
    private void awaitWaiters(int n) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (true) {
            lock.lock();
            try {
                if (queue.waiters() == n) {
                    return;
                }
            } finally {
                lock.unlock();
            }
            if (System.nanoTime() > deadline) {
                fail(n + " waiters never queued");
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
        }
    }

    private static String result(CompletableFuture<String> f) throws Exception {
        return f.get(10, TimeUnit.SECONDS);
    }

    @Test
    void signalWakesTheLongestWaiterFirstAndSignalAllTheRest() throws Exception {
        CompletableFuture<String> first = waiter(Long.MAX_VALUE);
        awaitWaiters(1);
        CompletableFuture<String> second = waiter(Long.MAX_VALUE);
        CompletableFuture<String> third = waiter(Long.MAX_VALUE);
        awaitWaiters(3);
        lock.lock();
        try {
            queue.signal();
        } finally {
            lock.unlock();
        }
        assertEquals("returned", result(first));
        assertFalse(second.isDone() || third.isDone(), "one signal wakes one waiter");
        lock.lock();
        try {
            assertEquals(2, queue.waiters());
            queue.signalAll();
            assertEquals(0, queue.waiters());
        } finally {
            lock.unlock();
        }
        assertEquals("returned", result(second));
        assertEquals("returned", result(third));
    }

    @Test
    void aTimedWaitEndsWhenItsTimePassesAndLeavesTheQueue() throws Exception {
        long start = System.nanoTime();
        CompletableFuture<String> w = waiter(TimeUnit.MILLISECONDS.toNanos(50));
        assertEquals("returned", result(w));
        assertTrue(System.nanoTime() - start >= TimeUnit.MILLISECONDS.toNanos(50), "waited its time");
        lock.lock();
        try {
            assertEquals(0, queue.waiters());
        } finally {
            lock.unlock();
        }
    }

    @Test
    void anInterruptEndsTheWaitWithTheLockHeldAgain() throws Exception {
        Thread[] thread = new Thread[1];
        CompletableFuture<String> w = new CompletableFuture<>();
        thread[0] = new Thread(() -> {
            lock.lock();
            try {
                queue.await(lock, Long.MAX_VALUE);
                w.complete("returned");
            } catch (InterruptedException e) {
                w.complete(lock.isHeldByCurrentThread() && !Thread.currentThread().isInterrupted()
                        ? "interrupted" : "interrupted, lock or status wrong");
            } finally {
                if (lock.isHeldByCurrentThread()) {
                    lock.unlock();
                }
            }
        });
        thread[0].start();
        awaitWaiters(1);
        thread[0].interrupt();
        assertEquals("interrupted", result(w));
        lock.lock();
        try {
            assertEquals(0, queue.waiters());
        } finally {
            lock.unlock();
        }
        thread[0].join(TimeUnit.SECONDS.toMillis(10));
    }

    /**
     * A waiter interrupted after it was signalled passes the signal to the next: otherwise the next would sleep on
     * with something to take (this one has no limit, so a lost signal fails the test by its timeout).
     */
    @Test
    void aSignalToAWaiterThatIsInterruptedGoesToTheNext() throws Exception {
        Thread[] first = new Thread[1];
        CompletableFuture<String> a = new CompletableFuture<>();
        first[0] = new Thread(() -> {
            lock.lock();
            try {
                queue.await(lock, Long.MAX_VALUE);
                a.complete("returned");
            } catch (InterruptedException e) {
                a.complete("interrupted");
            } finally {
                lock.unlock();
            }
        });
        first[0].start();
        awaitWaiters(1);
        CompletableFuture<String> b = waiter(Long.MAX_VALUE);
        awaitWaiters(2);
        lock.lock();
        try {
            first[0].interrupt();      // it cannot take the lock back before this thread lets go
            queue.signal();            // meant for the first waiter
        } finally {
            lock.unlock();
        }
        String ra = result(a);
        assertTrue(ra.equals("interrupted") || ra.equals("returned"), ra);
        if (ra.equals("interrupted")) {
            assertEquals("returned", result(b), "the signal went on to the second waiter");
        } else {
            lock.lock();
            try {
                queue.signal();
            } finally {
                lock.unlock();
            }
            assertEquals("returned", result(b));
        }
    }

    @Test
    void aWaiterSignalledForUnparkAfterTheUnlockWakesWhenUnparked() throws Exception {
        CompletableFuture<String> w = waiter(Long.MAX_VALUE);
        awaitWaiters(1);
        Thread t;
        lock.lock();
        try {
            t = queue.signalAfterUnlock();
            assertEquals(0, queue.waiters());
            assertEquals(null, queue.signalAfterUnlock(), "nobody else waits");
        } finally {
            lock.unlock();
        }
        LockSupport.unpark(t);
        assertEquals("returned", result(w));
    }

    @Test
    void signalAllForUnlockWakesAllButTheNewestAtOnceAndLeavesTheNewestToTheCaller() throws Exception {
        CompletableFuture<String> first = waiter(Long.MAX_VALUE);
        awaitWaiters(1);
        CompletableFuture<String> second = waiter(Long.MAX_VALUE);
        awaitWaiters(2);
        CompletableFuture<String> newest = waiter(Long.MAX_VALUE);
        awaitWaiters(3);
        Thread t;
        lock.lock();
        try {
            t = queue.signalAllAfterUnlock();
            assertEquals(0, queue.waiters());
            assertEquals(null, queue.signalAllAfterUnlock(), "nobody else waits");
        } finally {
            lock.unlock();
        }
        assertEquals("wait-queue-test-waiter-2", t.getName(), "the newest waiter is left to the caller");
        assertEquals("returned", result(first));
        assertEquals("returned", result(second));
        LockSupport.unpark(t);
        assertEquals("returned", result(newest));
    }

    @Test
    void awaitRefusesALockHeldTwice() {
        lock.lock();
        lock.lock();
        try {
            assertThrows(IllegalMonitorStateException.class, () -> queue.await(lock, 1));
            assertEquals(0, queue.waiters());
        } finally {
            lock.unlock();
            lock.unlock();
        }
    }

    @Test
    void aSecondWaitOfTheSameThreadStartsClean() throws InterruptedException, ExecutionException {
        lock.lock();
        try {
            queue.await(lock, 1);             // ends by its time
            queue.signal();                   // nobody waits: nothing happens
            queue.await(lock, TimeUnit.MILLISECONDS.toNanos(5));
            assertEquals(0, queue.waiters());
        } finally {
            lock.unlock();
        }
    }
}
