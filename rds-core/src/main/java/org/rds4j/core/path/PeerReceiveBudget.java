package org.rds4j.core.path;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.rds4j.core.stack.RdsCounters;
import org.rds4j.core.stack.RdsCounters.Counter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What one peer has queued on our sockets beyond their budgets, against {@code RdsStackConfig.peerReceiveBytes}.
 * A socket's budget is half its {@code SO_RCVBUF}: past it, its port is marked congested and an honest sender stops,
 * so an honest peer's excess is only what was in flight when the map went out. RDS's congestion maps only ask,
 * though; a peer that ignores them would grow our receive queues until the heap is gone. Past the bound, each of the
 * peer's connections stops being read at the end of its current read, and TCP pushes back on that peer alone; once
 * readers have taken the peer's excess down to half the bound, every stopped connection reads again. Nothing is
 * dropped. Counting only the excess keeps honest peers out of it: stopping a peer whose messages sit within their
 * sockets' budgets could stall an application that reads its sockets in a fixed order, waiting for a message
 * behind the stopped connection while the queued ones it would read later hold the peer over its bound.
 *
 * <p>Threads: the I/O thread that queues a batch on a socket charges the batch's excess under the socket queue's
 * lock, before a reader can take it ({@link #charge}, only when there is one), and checks the bound after each read
 * ({@link #pauseIfOver}); a reader that takes a message with excess gives it back ({@link #release}). The monitor is
 * taken only to stop or resume reading, which is rare. Stopping sets {@link #paused} before it re-reads the count,
 * and a release changes the count before it reads the flag, so a release that takes the count under the resume mark
 * either sees the flag or is seen by the stopping thread: no connection stays stopped below the mark.
 */
public final class PeerReceiveBudget {
    private static final Logger log = LoggerFactory.getLogger(PeerReceiveBudget.class);

    /** A connection of the peer that can stop being read: a {@link PathConnection}. */
    interface Reading {
        /** Stops or resumes reading; any thread. */
        void setReadable(boolean readable);
    }

    /** The peer, as the logs name it. */
    private final Object connection;
    private final RdsCounters statistics;
    private final StackReceiveBudget stack;
    private final long bound;
    private final long resumeAt;
    private final AtomicLong held = new AtomicLong();
    /** Some connection is stopped, or about to be: a release under the resume mark must look. */
    private volatile boolean paused;
    /** The most {@link #held} has been when a read ended; written by I/O threads under no lock (a report, no rule). */
    private volatile long peak;
    /** Guarded by this: the connections stopped, each once. */
    private final List<Reading> stopped = new ArrayList<>(8);

    /**
     * @param connection the peer, as the logs name it
     * @param statistics where a stop is counted
     */
    PeerReceiveBudget(Object connection, RdsCounters statistics, long bound, StackReceiveBudget stack) {
        this.connection = connection;
        this.statistics = statistics;
        this.stack = stack;
        this.bound = bound;
        this.resumeAt = bound / 2;
    }

    /**
     * Payload bytes of this peer queued beyond their sockets' budgets, not yet read.
     *
     * @return the bytes held now
     */
    public long held() {
        return held.get();
    }

    /**
     * The most this peer has held when one of its reads ended.
     *
     * @return the peak in bytes
     */
    public long peak() {
        return peak;
    }

    /**
     * Whether some connection of this peer is not being read; for inspection and tests.
     *
     * @return whether reading is stopped
     */
    public boolean isPaused() {
        return paused;
    }

    /**
     * A batch was queued on a socket with {@code bytes} beyond its budget (I/O thread).
     *
     * @param bytes the batch's excess
     */
    public void charge(long bytes) {
        held.addAndGet(bytes);
        stack.charge(bytes);
    }

    /**
     * {@code bytes} of excess left a queue: read by the application, or dropped with a closing socket. Any thread.
     *
     * @param bytes the payload bytes given back
     */
    public void release(long bytes) {
        long h = held.addAndGet(-bytes);
        stack.release(bytes);
        if (paused && mayResume(h)) {
            resume();
        }
    }

    /**
     * Whether stopped connections may read again: the peer is under its resume mark, and the stack is under its
     * own or the peer holds nothing beyond budgets (then it adds nothing to the stack's count).
     */
    private boolean mayResume(long h) {
        return h <= resumeAt && (h <= 0 || stack.isDrained());
    }

    /** The stack's excess went down to half its bound: read again if this peer may. */
    void stackDrained() {
        if (paused && mayResume(held.get())) {
            resume();
        }
    }

    /** Whether the peer must stop: over its own bound, or holding excess while the stack is over its bound. */
    private boolean mustStop(long h) {
        return h > bound || (h > 0 && stack.isOver());
    }

    /** After a read of {@code pc}: stops reading it if the peer holds more than the bound (I/O thread). */
    void pauseIfOver(Reading pc) {
        long now = held.get();
        if (now > peak) {
            peak = now;
        }
        if (!mustStop(now)) {
            return;
        }
        boolean byStack = now <= bound;
        // Listed with the stack whatever the reason, before re-reading the counts (see StackReceiveBudget): a peer
        // under its own mark may still wait for the stack's count to drain.
        stack.stopped(this);
        synchronized (this) {
            paused = true;
            long h = held.get();
            if (!mustStop(h) || stopped.contains(pc)) {
                paused = !stopped.isEmpty();
                return;
            }
            stopped.add(pc);
            pc.setReadable(false);
            statistics.increment(Counter.RECV_PEER_PAUSED);
            if (stopped.size() == 1 && !byStack) {
                log.info("{}: the peer has {} bytes queued beyond its sockets' budgets (half their SO_RCVBUF), more"
                        + " than peerReceiveBytes ({}): it ignores congestion; its connections stop being read until"
                        + " the application reads that down to {}",
                        connection, h, bound, resumeAt);
            } else if (stopped.size() == 1) {
                log.info("{}: all peers have {} bytes queued beyond their sockets' budgets, more than"
                        + " stackReceiveBytes ({}); this peer holds {} of them: its connections stop being read until"
                        + " the application reads its share, or all of it down to half", connection, stack.held(),
                        stack.bound(), h);
            }
        }
        if (mayResume(held.get())) {
            resume();                                  // the readers caught up while we were stopping
        }
    }

    /** Reading stops being our business for {@code pc}: it closed (I/O thread). */
    synchronized void forget(Reading pc) {
        stopped.remove(pc);
        paused = !stopped.isEmpty();
    }

    private synchronized void resume() {
        if (!mayResume(held.get()) || stopped.isEmpty()) {
            return;
        }
        log.debug("{}: {} bytes beyond the sockets' budgets: the peer's connections are read again", connection,
                held.get());
        for (Reading pc : stopped) {
            pc.setReadable(true);
        }
        stopped.clear();
        paused = false;
    }
}
