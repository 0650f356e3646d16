package org.rds4j.core.util;

import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Threads waiting for something guarded by a {@link ReentrantLock}, woken without allocating: a
 * {@link java.util.concurrent.locks.Condition} allocates a node for every wait (JDK 17), and a reader that waits once
 * per delivered batch made that about 5 bytes per message at 8 KiB in {@code ./rds4j bench}. Here each thread has one
 * node of its own, reused for every wait (a thread waits in one queue at a time), linked in while it waits.
 *
 * <p>Like a condition: {@link #await} releases the lock, parks, and takes the lock again before it returns, and may
 * return early, so callers re-check in a loop; {@link #signal} and {@link #signalAll} are called under the lock.
 * A waiter that was signalled and then interrupted passes the signal on, so no wake-up is lost.
 */
public final class WaitQueue {
    private static final ThreadLocal<Node> NODE = ThreadLocal.withInitial(Node::new);

    private static final class Node {
        final Thread thread = Thread.currentThread();
        /** Set by a signaller under the lock, read by the parked owner without it. */
        volatile boolean woken;
        /** Under the lock. */
        boolean queued;
        Node next;
        Node prev;
    }

    // Under the lock.
    private Node head;
    private Node tail;

    /**
     * Releases {@code lock}, which the caller holds exactly once, and waits until signalled, interrupted or
     * {@code nanos} have passed ({@link Long#MAX_VALUE}: no limit); then takes the lock again.
     *
     * @param lock the lock guarding what the caller waits for
     * @param nanos the longest wait, in nanoseconds
     * @throws InterruptedException if the thread was interrupted (its interrupt status is cleared)
     */
    public void await(ReentrantLock lock, long nanos) throws InterruptedException {
        if (lock.getHoldCount() != 1) {
            throw new IllegalMonitorStateException("await needs the lock held exactly once, not "
                    + lock.getHoldCount() + " times");
        }
        Node n = NODE.get();
        n.woken = false;
        link(n);
        boolean interrupted = false;
        lock.unlock();
        try {
            long deadline = nanos == Long.MAX_VALUE ? 0 : System.nanoTime() + nanos;
            while (!n.woken) {
                if (nanos == Long.MAX_VALUE) {
                    LockSupport.park(this);
                } else {
                    long left = deadline - System.nanoTime();
                    if (left <= 0) {
                        break;
                    }
                    LockSupport.parkNanos(this, left);
                }
                if (Thread.interrupted()) {
                    interrupted = true;
                    break;
                }
            }
        } finally {
            lock.lock();
            if (n.queued) {
                unlink(n);
            }
        }
        if (interrupted) {
            if (n.woken) {
                signal();                    // the signal was meant for a waiter that will not act on it
            }
            throw new InterruptedException();
        }
    }

    /**
     * How many threads wait. Under the lock.
     *
     * @return the number of waiting threads
     */
    public int waiters() {
        int count = 0;
        for (Node n = head; n != null; n = n.next) {
            count++;
        }
        return count;
    }

    /** Wakes the longest waiting thread, if any. Under the lock. */
    public void signal() {
        Node n = head;
        if (n != null) {
            unlink(n);
            n.woken = true;
            LockSupport.unpark(n.thread);
        }
    }

    /**
     * Takes the longest waiting thread out of the queue as signalled, without unparking it: the caller unparks it
     * ({@link LockSupport#unpark}) once it has released the lock, so that the waiter does not wake into a lock still
     * held, block on it, and allocate the lock's queue node (seen in an allocation profile of {@code ./rds4j bench}
     * once the reader's own wait allocated nothing). An early unpark is harmless: every park here re-checks.
     * Under the lock.
     *
     * @return the thread to unpark after the lock is released, or {@code null} if none waits
     */
    public Thread signalAfterUnlock() {
        Node n = head;
        if (n == null) {
            return null;
        }
        unlink(n);
        n.woken = true;
        return n.thread;
    }

    /**
     * As {@link #signalAfterUnlock()}, for one given thread: the one a wake-up is meant for. Under the lock.
     *
     * @param thread the thread to wake
     * @return {@code thread} if it waits here (to unpark once the lock is released), else {@code null}
     */
    public Thread signalAfterUnlock(Thread thread) {
        for (Node n = head; n != null; n = n.next) {
            if (n.thread == thread) {
                unlink(n);
                n.woken = true;
                return thread;
            }
        }
        return null;
    }

    /**
     * Takes every waiting thread out of the queue as signalled: unparks all but the newest at once and returns that
     * one for the caller to unpark once it has released the lock, as {@link #signalAfterUnlock} does. With one waiter,
     * the common case, nobody wakes into a lock still held: a sender woken for room in its send budget that way
     * blocked on the lock, was woken a second time by the unlock and allocated the lock's queue node (an allocation
     * profile of {@code ./rds4j bench} at 64 KiB). Under the lock.
     *
     * @return the thread to unpark after the lock is released, or {@code null} if none waits
     */
    public Thread signalAllAfterUnlock() {
        Node last = tail;
        if (last == null) {
            return null;
        }
        while (head != last) {
            signal();
        }
        return signalAfterUnlock();
    }

    /** Wakes every waiting thread. Under the lock. */
    public void signalAll() {
        while (head != null) {
            signal();
        }
    }

    private void link(Node n) {
        n.queued = true;
        n.next = null;
        n.prev = tail;
        if (tail == null) {
            head = n;
        } else {
            tail.next = n;
        }
        tail = n;
    }

    private void unlink(Node n) {
        if (n.prev == null) {
            head = n.next;
        } else {
            n.prev.next = n.next;
        }
        if (n.next == null) {
            tail = n.prev;
        } else {
            n.next.prev = n.prev;
        }
        n.next = null;
        n.prev = null;
        n.queued = false;
    }
}
