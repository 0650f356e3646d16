package org.rds4j.core.path;

import java.nio.ByteBuffer;
import java.util.Arrays;
import org.rds4j.core.stack.RdsCounters.Counter;
import org.rds4j.core.cong.CongestionFrames;
import org.rds4j.core.cong.CongestionMap;
import org.rds4j.core.wire.RdsHeader;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a path does with each message that arrives on it, the kernel's {@code rds_recv_incoming} for one path: the
 * duplicate rule and the next expected number, the acknowledgements the header carries, pongs to our pings, pings
 * and probes, and congestion maps. On the connection's I/O thread, which owns the path.
 */
final class PathReceiver {
    private static final Logger log = LoggerFactory.getLogger(PathReceiver.class);

    private final ConnectionPath path;
    private final Connection connection;
    private final ConnectionEnvironment env;
    private final Acknowledgements acks;
    private final PingHandler pings;
    /** Wakes the sockets that monitor congestion: made once, not a lambda per map received. */
    private final Runnable peerMapChanged;
    private long nextRxSeq;
    /**
     * Messages received with an h_ack since the last {@link #countAcks}: every data message of a busy stream carries
     * one, and an atomic add per message was a measurable part of the receiving I/O thread's time, so the count goes
     * to the stack's counter once per read.
     */
    private long acksUncounted;

    PathReceiver(ConnectionPath path, Acknowledgements acks) {
        this.path = path;
        this.connection = path.connection();
        this.env = connection.env();
        this.acks = acks;
        this.pings = new PingHandler(connection);
        this.peerMapChanged = () -> env.peerCongestionUpdated(connection.peer());
    }

    PingHandler pings() {
        return pings;
    }

    /** The next sequence number expected (the last received + 1), 0 before any. On the owner. */
    long nextRxSeq() {
        return nextRxSeq;
    }

    /** The peer restarted: it numbers from 1 again. On the owner. */
    void peerRestarted() {
        nextRxSeq = 0;
    }

    /** The cumulative acknowledgement we send: the last sequence number received on this path, 0 before any. */
    long ackValue() {
        return nextRxSeq == 0 ? 0 : nextRxSeq - 1;
    }

    /**
     * A complete message (not a congestion map) arrived. The kernel's rule for duplicates: drop it if it is marked
     * retransmitted and its number is below the next expected; otherwise take it, and expect the number after it
     * next, even if that moves backwards (a restarted peer starts again at 1). Its h_ack releases what the peer has.
     * Pings, pongs and probes are answered or consumed here.
     *
     * <p>A frame read from a connection the path no longer uses is ignored, and nothing of it counts: its
     * connection was replaced, and the path's numbers now follow the new one. Taking it would move the next
     * expected number past messages the new connection is about to resend, which the duplicate rule would then drop:
     * a message lost. The loopback transport's multipath test lost one so in CI: an abort reports the close on the
     * aborting thread while the connection's own thread may still be handing over a chunk it had taken, and by then
     * the peer had connected again (StaleConnectionTest).
     *
     * @return true if the message is data for the socket at its destination port: the caller delivers it
     */
    boolean receive(RdsHeader h, PathConnection from) {
        int sport = h.sourcePort();
        int dport = h.destinationPort();
        assert connection.ownerOnly();
        if (from != path.currentConnection()) {
            return false;
        }
        // Acknowledgements count only from a connection of the peer's current numbering (see peerRestarted).
        boolean current = from.numbering == path.numbering().current();
        if (current && h.ack() != 0) {
            if (!connection.peerAcks().acknowledges()) {
                connection.peerAcks().acknowledges(true);
                log.debug("{}: the peer acknowledges (h_ack)", path);
            }
            path.releaseUpTo(h.ack());
            acksUncounted++;
        }
        if (h.hasFlag(RdsHeader.FLAG_RETRANSMITTED) && Long.compareUnsigned(h.sequence(), nextRxSeq) < 0) {
            env.statistics().increment(Counter.RECV_DROP_OLD_SEQ);
            return false;
        }
        nextRxSeq = h.sequence() + 1;
        boolean ackRequired = h.hasFlag(RdsHeader.FLAG_ACK_REQUIRED);    // only rds4j sets it over TCP
        acks.received(sport == 0 && dport == 0, ackRequired);
        if (ackRequired && !connection.peerAcks().acknowledges()) {
            connection.peerAcks().acknowledges(true);   // a volatile store (a fence) only when it changes
        }
        if (sport == 0 && current) {
            long answered = acks.pongArrived(dport);
            if (answered != Acknowledgements.NOT_OURS) {
                connection.peerAcks().answersPings();
            }
            if (answered > 0) {
                path.releaseUpTo(answered);     // the pong proves the peer had everything before the ping
                env.statistics().increment(Counter.ACK_RECEIVED);
            }
            if (answered != Acknowledgements.NOT_OURS) {
                return false;                   // ours, or a late answer from before a reset: nothing more
            }
        }
        from.peerInitiated();
        return !pings.handle(h, path);
    }

    /** The end of a read (or of a stream cut short by a bad frame): adds the acknowledgements it carried. On the owner. */
    void countAcks() {
        assert connection.ownerOnly();
        if (acksUncounted != 0) {
            env.statistics().add(Counter.ACK_RECEIVED, acksUncounted);
            acksUncounted = 0;
        }
    }

    /** A congestion map arrived: replace the peer's map and wake senders waiting on it. */
    void receiveCongestionMap(ByteBuffer map) {
        CongestionMap peerMap = connection.peerMap();
        CongestionFrames.received(peerMap, map, peerMapChanged);
        env.statistics().increment(Counter.CONG_UPDATE_RECEIVED);
        if (log.isDebugEnabled()) {
            log.debug("{}: congestion map from the peer, congested ports {}", path,
                    Arrays.toString(peerMap.congestedPorts()));
        }
    }
}
