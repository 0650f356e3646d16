package org.rds4j.core;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import org.rds4j.EagainException;
import org.rds4j.EbadfException;
import org.rds4j.EintrException;
import org.rds4j.EtimedoutException;
import org.rds4j.core.RdsCounters.Counter;
import org.rds4j.core.util.SpinningLock;
import org.rds4j.core.util.WaitQueue;

/**
 * A socket's send budget: payload bytes (and messages) queued and not yet released by the peer. The kernel's
 * {@code rs_snd_bytes} against half of {@code SO_SNDBUF}: a send is accepted while less than the budget is in use, so
 * the last one may overshoot.
 *
 * <p>The common case takes no lock: a sender reserves with one compare-and-set, the I/O thread releases with one
 * atomic add per acknowledgement batch. The lock and its wait queue are only for senders that must wait (a full
 * budget) and {@link #awaitEmpty}; a releaser takes it only when someone waits. The waiter counts itself before it
 * re-checks the budget and the releaser subtracts before it reads the count (both volatile), so no wake-up is lost.
 */
final class SendBuffer {
    private final AtomicLong bytes = new AtomicLong();
    private final AtomicLong messages = new AtomicLong();
    private final ReentrantLock lock = new SpinningLock();
    private final WaitQueue changed = new WaitQueue();
    private final RdsCounters counters;
    private volatile int waiters;
    private volatile long budget;

    SendBuffer(RdsCounters counters, long budget) {
        this.counters = counters;
        this.budget = budget;
    }

    long budget() {
        return budget;
    }

    /** A new SO_SNDBUF: wakes waiting senders, which may now fit. */
    void budget(long b) {
        this.budget = b;
        wakeAll();
    }

    long queuedBytes() {
        return bytes.get();
    }

    long queuedMessages() {
        return messages.get();
    }

    boolean hasRoom() {
        return bytes.get() < budget;
    }

    /**
     * Takes room for a message of {@code len} bytes, waiting for it if {@code blocking} (up to {@code timeoutNanos},
     * 0 for ever).
     *
     * @return whether the buffer was at least half full: the message then asks for a prompt acknowledgement, as the
     *         kernel marks it ACK_REQUIRED
     */
    boolean reserve(int len, boolean blocking, long timeoutNanos, CoreSocket socket) throws java.io.IOException {
        long b = budget;
        long q = bytes.get();
        if (q < b && bytes.compareAndSet(q, q + len)) {
            messages.incrementAndGet();
            return q >= b / 2;
        }
        return reserveSlow(len, blocking, timeoutNanos, socket);
    }

    /**
     * Takes room for a message of {@code len} bytes if there is some now; never waits.
     *
     * @return -1 if the budget is full (nothing taken); else 1 if it was at least half full (ask for a prompt
     *         acknowledgement, as {@link #reserve} says), 0 if not
     */
    int tryReserve(int len) {
        long b = budget;
        long q = bytes.get();
        if (q < b && bytes.compareAndSet(q, q + len)) {
            messages.incrementAndGet();
            return q >= b / 2 ? 1 : 0;
        }
        return -1;
    }

    private boolean reserveSlow(int len, boolean blocking, long timeoutNanos, CoreSocket socket)
            throws java.io.IOException {
        long deadline = timeoutNanos == 0 ? Long.MAX_VALUE : System.nanoTime() + timeoutNanos;
        boolean counted = false;
        lock.lock();
        waiters++;
        try {
            while (true) {
                socket.checkOpen();
                long b = budget;
                long q = bytes.get();
                if (q < b) {
                    if (bytes.compareAndSet(q, q + len)) {
                        messages.incrementAndGet();
                        return q >= b / 2;
                    }
                    continue;
                }
                if (!counted) {
                    counters.increment(Counter.SEND_QUEUE_FULL);
                    counted = true;
                }
                if (!blocking) {
                    throw new EagainException("the send buffer is full (" + q + " of " + b + " bytes queued);"
                            + " retry when earlier messages have left, or raise SO_SNDBUF");
                }
                long left = deadline == Long.MAX_VALUE ? TimeUnit.MILLISECONDS.toNanos(100)
                        : deadline - System.nanoTime();
                if (left <= 0) {
                    throw new EtimedoutException("the send buffer stayed full for SO_SNDTIMEO");
                }
                changed.await(lock, left);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new EintrException("interrupted while waiting for send-buffer space; nothing was sent");
        } finally {
            waiters--;
            lock.unlock();
        }
    }

    /** Gives back room for {@code count} messages of {@code len} bytes in all; wakes waiters if any. */
    void release(int count, long len) {
        bytes.addAndGet(-len);
        messages.addAndGet(-count);
        if (waiters > 0) {
            wakeAll();
        }
    }

    /** Waits until every message queued has been released; false if the timeout passed first. */
    boolean awaitEmpty(long timeoutNanos, CoreSocket socket) throws EbadfException {
        long deadline = System.nanoTime() + timeoutNanos;
        lock.lock();
        waiters++;
        try {
            // Messages, not only bytes: zero-length messages take no bytes but must leave too.
            while (bytes.get() > 0 || messages.get() > 0) {
                socket.checkOpen();
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return false;
                }
                changed.await(lock, left);
            }
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return bytes.get() == 0 && messages.get() == 0;
        } finally {
            waiters--;
            lock.unlock();
        }
    }

    /** Wakes everyone waiting (a release, a new budget, a close). */
    void wakeAll() {
        Thread last;
        lock.lock();
        try {
            last = changed.signalAllAfterUnlock();
        } finally {
            lock.unlock();
        }
        if (last != null) {
            LockSupport.unpark(last);               // after the lock: the sender wakes into a free lock
        }
    }
}
