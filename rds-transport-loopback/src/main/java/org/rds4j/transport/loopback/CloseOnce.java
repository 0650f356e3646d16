package org.rds4j.transport.loopback;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

/**
 * An endpoint's close, by any thread, and its one report to the handler. The first close wins; its cause goes in
 * the same compare-and-set as the flag, so the report always carries the winner's cause: a losing closer, with
 * another cause, writes nothing. The report is claimed once, by whichever thread first finds the endpoint closed and a
 * handler to tell.
 */
final class CloseOnce {
    /** The state while open. */
    private static final Object OPEN = new Object();
    /** Closed with no cause (our own close). */
    private static final Object NO_CAUSE = new Object();

    private final AtomicReference<Object> state = new AtomicReference<>(OPEN);
    private final AtomicBoolean reported = new AtomicBoolean();

    /**
     * Closes, if nobody did yet.
     *
     * @param cause why, or null for a close of our own
     * @return true for the one close that won
     */
    boolean close(Throwable cause) {
        return state.get() == OPEN && state.compareAndSet(OPEN, cause == null ? NO_CAUSE : cause);
    }

    boolean isClosed() {
        return state.get() != OPEN;
    }

    /** The winning close's cause; null if the close was our own or there was none yet. */
    Throwable cause() {
        return state.get() instanceof Throwable t ? t : null;
    }

    /**
     * Claims the report of the close.
     *
     * @return true once, to the first caller after the close
     */
    boolean claimReport() {
        return isClosed() && reported.compareAndSet(false, true);
    }
}
