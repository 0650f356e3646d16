package org.rds4j.core.conn;

import java.net.InetSocketAddress;
import org.rds4j.RdsDatagram;

/** The socket a queued message belongs to, as a connection path sees it. */
public interface MessageOwner {
    /** The socket is closed: its messages are dropped instead of being sent. */
    boolean isClosed();

    /** The message left the send buffer: the peer has it (or the socket closed and dropped it). */
    void released(OutgoingMessage message);

    /**
     * The message will not be delivered: it left the send buffer without reaching the peer.
     *
     * @param destination where it was going
     * @param reason why
     */
    void failed(OutgoingMessage message, InetSocketAddress destination, RdsDatagram.Failure reason);
}
