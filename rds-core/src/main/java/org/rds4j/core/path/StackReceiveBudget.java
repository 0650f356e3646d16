package org.rds4j.core.path;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What all peers together have queued on a stack's sockets beyond their budgets, against
 * {@code RdsStackConfig.stackReceiveBytes}: each {@link PeerReceiveBudget} bounds one peer, this bounds many hostile
 * peers at once. Past it, every peer that holds any excess stops being read at its next read; a peer with none (an
 * honest one whose messages sit within their sockets' budgets) never does. A peer stopped here reads again once its
 * own excess is gone, or once the stack's is down to half the bound.
 *
 * <p>Threads: as {@link PeerReceiveBudget}, whose calls keep this count: an atomic add per charge or release with
 * excess, a volatile read after each read of a connection, and the monitor only to list or resume stopped peers. A
 * peer that stops sets {@link #anyStopped} before it re-reads the count, and a release changes the count before it
 * reads the flag, so one of them always sees the other.
 */
public final class StackReceiveBudget {
    private final long bound;
    private final long resumeAt;
    private final AtomicLong held = new AtomicLong();
    private volatile boolean anyStopped;
    /** Guarded by this: peers stopped because the stack was over its bound. */
    private final List<PeerReceiveBudget> stopped = new ArrayList<>();

    /**
     * A stack's budget.
     *
     * @param bound the most excess all peers together may hold before peers with excess stop being read
     */
    public StackReceiveBudget(long bound) {
        this.bound = bound;
        this.resumeAt = bound / 2;
    }

    /**
     * The excess all peers hold now.
     *
     * @return bytes queued beyond sockets' budgets, all peers together
     */
    public long held() {
        return held.get();
    }

    long bound() {
        return bound;
    }

    boolean isOver() {
        return held.get() > bound;
    }

    boolean isDrained() {
        return held.get() <= resumeAt;
    }

    void charge(long bytes) {
        held.addAndGet(bytes);
    }

    void release(long bytes) {
        long h = held.addAndGet(-bytes);
        if (anyStopped && h <= resumeAt) {
            resumeAll();
        }
    }

    /** {@code p} stopped a connection because the stack was over its bound; call before re-checking the count. */
    synchronized void stopped(PeerReceiveBudget p) {
        anyStopped = true;
        if (!stopped.contains(p)) {
            stopped.add(p);
        }
    }

    private void resumeAll() {
        List<PeerReceiveBudget> peers;
        synchronized (this) {
            if (held.get() > resumeAt || stopped.isEmpty()) {
                return;
            }
            peers = new ArrayList<>(stopped);
            stopped.clear();
            anyStopped = false;
        }
        for (PeerReceiveBudget p : peers) {
            p.stackDrained();                      // outside our monitor: it takes its own
        }
    }
}
