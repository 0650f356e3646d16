package org.rds4j.core.socket;

/**
 * Whether a thread about to park for its peer should first yield its core for a while: the default mode's answer to
 * request-reply traffic ({@link org.rds4j.RdsStackConfig#replySpin()}, decision 0027), and a blocking sender's to a
 * full send budget, which the peer's acknowledgement gives back ({@link SendBuffer}, decision 0028).
 *
 * <p>A reader whose socket sent something since the socket's last wait is most likely waiting for the reply. If it
 * parks, the I/O thread that delivers the reply has to wake it: a futex wake-up of a thread on another core, which
 * in a profile of {@code ./rds4j stress} took a quarter of each I/O thread's CPU, after which the reader still has
 * to be scheduled. Yielding for up to {@link #window()} instead finds the reply without either. The window is kept
 * only while it pays: the replies waited for are timed, and once they take longer than the window on average (a
 * slow peer, a long computation on the other side), readers park at once again; a reader with nothing sent since
 * the last wait (a one-way stream's) always parks at once.
 *
 * <p>A sender waiting for budget always waits for the peer, so it asks only {@link #worthSpinning()} and reports
 * each wait with {@link #replied}, as a reader does for a reply; it yields only while the waits average under a
 * quarter of the window ({@link SendBuffer#WORTH_SPINNING_SHARE}).
 *
 * <p>State of one socket's receive queue or send budget, used under that one's lock; what a single wait needs (when
 * it began) is the waiting thread's own.
 */
final class ReplySpin {
    /** Whether yielding can help at all: with one processor the peer's answer cannot come while this thread runs. */
    static final boolean SEVERAL_CPUS = Runtime.getRuntime().availableProcessors() > 1;

    /** The smoothing of the reply time: each new time counts for a quarter, as TCP's smoothed round trip does. */
    private static final int SMOOTHING_SHIFT = 2;

    private final long windowNanos;
    /** The longest smoothed wait for which yielding still pays. */
    private final long worthNanos;
    /** The socket's send count when a reader last began to wait. */
    private int sendsAtWait;
    /** The smoothed time a wait for a reply took, in nanoseconds. */
    private long replyNanos;

    /**
     * Yields while the waits average within the window.
     *
     * @param windowNanos the longest yield before parking; 0 never yields
     */
    ReplySpin(long windowNanos) {
        this(windowNanos, windowNanos);
    }

    /**
     * @param windowNanos the longest yield before parking; 0 never yields
     * @param worthNanos  the longest smoothed wait for which a wait still begins by yielding, at most the window
     */
    ReplySpin(long windowNanos, long worthNanos) {
        if (windowNanos < 0) {
            throw new IllegalArgumentException("the window cannot be negative, was " + windowNanos);
        }
        if (worthNanos < 0 || worthNanos > windowNanos) {
            throw new IllegalArgumentException("the wait worth yielding for must be 0 to the window (" + windowNanos
                    + " ns), was " + worthNanos);
        }
        this.windowNanos = windowNanos;
        this.worthNanos = worthNanos;
    }

    /** The longest a reader yields before it parks; 0 if it never does. */
    long window() {
        return windowNanos;
    }

    /**
     * A reader begins to wait, and the socket has begun {@code sends} sends so far (a wrapping count): whether this
     * wait is one for a reply, which the reader then reports with {@link #replied}. The next wait compares with
     * this count, so of several waits after one send only the first is taken for a reply.
     */
    boolean awaitsReply(int sends) {
        if (windowNanos == 0) {
            return false;
        }
        boolean sent = sends != sendsAtWait;
        sendsAtWait = sends;
        return sent;
    }

    /**
     * Whether a thread waiting for its peer should yield before parking: the waits lately ended within the window (a
     * reader's) or within the share of it given (a sender's), on average.
     */
    boolean worthSpinning() {
        return windowNanos > 0 && replyNanos <= worthNanos;
    }

    /** A wait for a reply ended after {@code waitedNanos}: a message came, or the receive's timeout ran out first. */
    void replied(long waitedNanos) {
        long t = Math.max(0, waitedNanos);
        replyNanos += (t - replyNanos) >> SMOOTHING_SHIFT;
    }

    /** The smoothed reply time, for tests and inspection. */
    long replyNanos() {
        return replyNanos;
    }
}
