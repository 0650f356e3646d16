package org.rds4j.bench;

/**
 * A connected pair of endpoints, as two hosts would hold them: {@link #a()} plays the sender (and the pinger),
 * {@link #b()} the receiver (and the echoer).
 */
public interface Link extends AutoCloseable {
    Endpoint a();

    Endpoint b();

    /**
     * Releases every socket, thread and buffer of the link, and makes every blocked {@link Endpoint} call return or
     * throw. Idempotent; may be called from any thread while the endpoints are in use.
     */
    @Override
    void close();
}
