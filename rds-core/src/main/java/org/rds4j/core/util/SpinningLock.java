package org.rds4j.core.util;

import java.util.concurrent.locks.ReentrantLock;

/**
 * A {@link ReentrantLock} that, when it finds the lock held, tries again for a short while before it queues.
 *
 * <p>Why: a {@code ReentrantLock} that must queue allocates a node for the waiting thread (JDK 17's
 * {@code AbstractQueuedSynchronizer.acquire}), on every contended {@code lock()}. The locks this replaces (a socket's
 * receive queue, its send budget's waiters, a selector's ready queue) are held for a few hundred nanoseconds by an
 * I/O thread on one side and an application thread on the other, and an allocation profile of {@code ./rds4j bench}
 * at 64 B over the loopback transport found those nodes to be most of what the message path still allocated, more
 * in the runs where the two sides overlap most. Most such contention is over before a queued thread could even park;
 * a holder that was descheduled is not, and then the thread queues as before. The spin is bounded, so a waiter never
 * keeps a core from the thread it waits for for long.
 */
public final class SpinningLock extends ReentrantLock {
    private static final long serialVersionUID = 1L;

    /** Tries before queueing: each a {@link Thread#onSpinWait()}, some tens of nanoseconds, so about a microsecond. */
    static final int SPINS = 64;

    @Override
    public void lock() {
        if (tryLock()) {
            return;
        }
        for (int i = 0; i < SPINS; i++) {
            Thread.onSpinWait();
            if (!isLocked() && tryLock()) {
                return;
            }
        }
        super.lock();
    }
}
