package org.rds4j.core.path;

import java.util.concurrent.atomic.AtomicReference;

/**
 * Which connection has a check due, one at a time, marked by I/O threads and cleared by the check: a second mark of
 * the connection already marked schedules nothing; a mark of another connection (path 0's connection was replaced)
 * takes over; a check that ends clears only its own connection's mark, never the one that took over.
 *
 * @param <T> the connection
 */
final class DueCheck<T> {
    private final AtomicReference<T> due = new AtomicReference<>();

    /**
     * Marks {@code connection}'s check as due.
     *
     * @return true if the caller must schedule the check: it was not due already
     */
    boolean mark(T connection) {
        return due.getAndSet(connection) != connection;
    }

    /** {@code connection}'s check ended: a later mark schedules a new one. */
    void done(T connection) {
        due.compareAndSet(connection, null);
    }
}
