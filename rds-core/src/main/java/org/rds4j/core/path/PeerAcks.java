package org.rds4j.core.path;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How a peer confirms what it received, learnt from its traffic: by a non-zero h_ack (an rds4j peer; a kernel never
 * acknowledges over TCP) or only by answering pings; and whether it answers pings at all. Two volatile fields, read by
 * senders and every path without a lock (docs/threading.md).
 */
final class PeerAcks {
    private static final Logger log = LoggerFactory.getLogger(PeerAcks.class);

    private final Connection connection;
    private volatile boolean acknowledges;
    /** Why sends to the peer fail (it answers no acknowledgement ping), or {@code null}. */
    private volatile String failure;

    PeerAcks(Connection connection) {
        this.connection = connection;
    }

    /** Whether the peer was seen sending a non-zero h_ack: its messages are released by acknowledgements. */
    boolean acknowledges() {
        return acknowledges;
    }

    /** Records whether the peer acknowledges; false again after it restarts, to be learnt afresh. */
    void acknowledges(boolean acks) {
        this.acknowledges = acks;
    }

    /** Why sends to the peer fail at the moment, or {@code null}: see {@link Connection#ackFailure}. */
    String failure() {
        return failure;
    }

    /** A path found that the peer answers no ping: sends fail until it answers. Logged once per occurrence. */
    void answersNoPings(long silentMillis) {
        if (failure != null) {
            return;
        }
        failure = connection.peer().getHostAddress() + " answered none of rds4j's acknowledgement pings for "
                + silentMillis + " ms, so whether it received anything cannot be known; if it is a Linux host, check"
                + " net.rds.ping_enable (it must be 1). Sends to it fail until it answers.";
        log.warn("{}: {}", connection, failure);
    }

    /** A pong arrived: the peer answers pings (again). */
    void answersPings() {
        if (failure != null) {
            failure = null;
            log.info("{}: the peer answers acknowledgement pings again; sends to it go on", connection);
        }
    }
}
