package org.rds4j.core.conn;

/** The socket a queued message belongs to, as a connection path sees it. */
public interface MessageOwner {
    /** The socket is closed: its messages are dropped instead of being sent. */
    boolean isClosed();

    /** The message left the send buffer (written, or dropped because the socket closed). */
    void released(OutgoingMessage message);
}
