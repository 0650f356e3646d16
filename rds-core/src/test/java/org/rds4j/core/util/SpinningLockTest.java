package org.rds4j.core.util;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.lang.management.ManagementFactory;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantLock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link SpinningLock}: still a mutually exclusive, reentrant lock, and a {@code lock()} that finds it briefly held
 * allocates nothing, where a plain {@link ReentrantLock} allocates a queue node for it.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SpinningLockTest {
    /** Contended acquisitions measured. */
    private static final int CONTENDED = 2_000;
    /** At most this many acquisitions (a few seconds) to find them. */
    private static final int MAX_ACQUISITIONS = 2_000_000;
    private static final com.sun.management.ThreadMXBean THREADS =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

    @Test
    void excludesAndReenters() throws Exception {
        SpinningLock lock = new SpinningLock();
        long[] counter = new long[1];
        int threads = 4;
        int each = 50_000;
        Thread[] ts = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            ts[t] = new Thread(() -> {
                for (int i = 0; i < each; i++) {
                    lock.lock();
                    try {
                        lock.lock();                   // reentrant: the spin must not stand in its own way
                        try {
                            counter[0]++;
                        } finally {
                            lock.unlock();
                        }
                    } finally {
                        lock.unlock();
                    }
                }
            });
            ts[t].start();
        }
        for (Thread t : ts) {
            t.join(TimeUnit.SECONDS.toMillis(30));
            assertTrue(!t.isAlive(), "a thread never finished: a lost wake-up?");
        }
        assertEquals((long) threads * each, counter[0]);
        assertTrue(!lock.isLocked());
    }

    /**
     * One thread takes the lock over and over, for half a microsecond each time and a microsecond apart; another takes
     * it until it has found it held 2,000 times. A plain {@code ReentrantLock} costs the second thread a node of 32 bytes
     * or so for each of those; this lock nothing, unless the holder was descheduled while it held the lock (then the
     * taker queues as before): the bound allows that for a tenth of them. On a machine that never runs the two threads
     * at once there is no contention to measure, and the test is skipped.
     *
     * <p>The plain lock's figure is printed for comparison, not asserted: whether its {@code lock()} queues depends on
     * whether the holder released the lock in the few nanoseconds between {@code isLocked()} and {@code lock()}, and
     * one CI run found it queueing for only a fraction of 2,000 (9,848 B).
     */
    @Test
    void aBrieflyHeldLockIsTakenWithoutAllocating() throws Exception {
        Contention plain = contend(new ReentrantLock());
        Contention spinning = contend(new SpinningLock());
        System.out.printf("contended lock(): ReentrantLock %d of %d found held, %d B; SpinningLock %d of %d, %d B%n",
                plain.contended, plain.acquisitions, plain.allocated, spinning.contended, spinning.acquisitions,
                spinning.allocated);
        assumeTrue(spinning.contended >= CONTENDED, "the lock was seldom held when taken, nothing to measure: "
                + spinning.contended + " of " + spinning.acquisitions);
        assertTrue(spinning.allocated <= 32L * spinning.contended / 10,
                spinning.allocated + " B allocated for " + spinning.contended + " contended lock() calls");
    }

    private record Contention(int acquisitions, int contended, long allocated) {
    }

    private static Contention contend(ReentrantLock lock) throws InterruptedException {
        AtomicBoolean stop = new AtomicBoolean();
        CountDownLatch running = new CountDownLatch(1);
        Thread holder = new Thread(() -> {
            while (!stop.get()) {
                lock.lock();
                try {
                    running.countDown();
                    busy(500);
                } finally {
                    lock.unlock();
                }
                busy(1_000);                            // as an I/O thread decodes the next read
            }
        }, "lock-holder");
        holder.start();
        try {
            assertTrue(running.await(10, TimeUnit.SECONDS), "the holder never started");
            take(lock, 5_000, Integer.MAX_VALUE);       // compiled and warm before it counts
            long before = THREADS.getCurrentThreadAllocatedBytes();
            int[] counts = take(lock, MAX_ACQUISITIONS, CONTENDED);
            long allocated = THREADS.getCurrentThreadAllocatedBytes() - before;
            return new Contention(counts[0], counts[1], allocated);
        } finally {
            stop.set(true);
            holder.join(TimeUnit.SECONDS.toMillis(10));
        }
    }

    private static void busy(long nanos) {
        long until = System.nanoTime() + nanos;
        while (System.nanoTime() < until) {
            Thread.onSpinWait();
        }
    }

    /**
     * Takes and releases the lock up to {@code n} times, until it was found held {@code enough} times.
     *
     * @return the acquisitions made and how many times the lock was held just before
     */
    private static int[] take(ReentrantLock lock, int n, int enough) {
        int contended = 0;
        int i = 0;
        while (i < n && contended < enough) {
            if (lock.isLocked()) {
                contended++;
            }
            lock.lock();
            lock.unlock();
            i++;
            busy(700);                                  // as a reader copies out what it took
        }
        return new int[] {i, contended};
    }
}
