package org.rds4j.core.util;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import org.jetbrains.lincheck.Lincheck;
import org.junit.jupiter.api.Test;

/**
 * {@link WaitQueue}'s wake-ups, model-checked by Lincheck: each test runs its threads under every interleaving
 * Lincheck explores (at every shared read and write, lock, park and unpark) and fails on a lost wake-up, which shows
 * as a thread that never returns (Lincheck reports the hang with its interleaving). The threads hand out as many
 * permits as they wait for, so in a correct queue every interleaving ends.
 */
class WaitQueueLincheckTest {
    private static final int INVOCATIONS = 100;

    /** Permits guarded by a lock, waited for on a wait queue: the way SendBuffer and the receive queue use one. */
    private static final class Permits {
        final ReentrantLock lock = new SpinningLock();
        final WaitQueue queue = new WaitQueue();
        int permits;

        void take() {
            lock.lock();
            try {
                while (permits == 0) {
                    queue.await(lock, Long.MAX_VALUE);
                }
                permits--;
            } catch (InterruptedException e) {
                throw new AssertionError("nobody interrupts", e);
            } finally {
                lock.unlock();
            }
        }

        /** One permit, and the longest waiter woken under the lock. */
        void give() {
            lock.lock();
            try {
                permits++;
                queue.signal();
            } finally {
                lock.unlock();
            }
        }

        /** One permit; the waiter is unparked after the lock is released. */
        void giveAfterUnlock() {
            Thread t;
            lock.lock();
            try {
                permits++;
                t = queue.signalAfterUnlock();
            } finally {
                lock.unlock();
            }
            if (t != null) {
                LockSupport.unpark(t);
            }
        }

        /** {@code n} permits and every waiter woken, the newest after the lock is released. */
        void giveAll(int n) {
            Thread t;
            lock.lock();
            try {
                permits += n;
                t = queue.signalAllAfterUnlock();
            } finally {
                lock.unlock();
            }
            if (t != null) {
                LockSupport.unpark(t);
            }
        }
    }

    @Test
    void signalUnderTheLockWakesEachWaiter() {
        Lincheck.runConcurrentTest(INVOCATIONS, () -> {
            Permits p = new Permits();
            ConcurrentRun.all(p::take, p::take, () -> {
                p.give();
                p.give();
            });
            assertEquals(0, p.permits);
        });
    }

    @Test
    void signalAfterUnlockWakesEachWaiter() {
        Lincheck.runConcurrentTest(INVOCATIONS, () -> {
            Permits p = new Permits();
            ConcurrentRun.all(p::take, p::take, p::giveAfterUnlock, p::giveAfterUnlock);
            assertEquals(0, p.permits);
        });
    }

    @Test
    void signalAllAfterUnlockWakesEveryWaiter() {
        Lincheck.runConcurrentTest(INVOCATIONS, () -> {
            Permits p = new Permits();
            ConcurrentRun.all(p::take, p::take, () -> p.giveAll(2));
            assertEquals(0, p.permits);
        });
    }
}
