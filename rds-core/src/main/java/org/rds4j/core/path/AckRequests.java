package org.rds4j.core.path;

import java.util.concurrent.TimeUnit;
import org.rds4j.RdsDatagram;
import org.rds4j.core.stack.RdsCounters.Counter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * When a path asks its peer what it has received, with an acknowledgement ping (docs/reliability.md), and what it
 * does when no answer comes: the fallback after a quiet while, the expiry of unanswered pings, and the verdict on a
 * peer that answers none. {@link Acknowledgements} keeps the slots; this decides when to use them. Every method runs
 * on the path's owner.
 */
final class AckRequests {
    private static final Logger log = LoggerFactory.getLogger(AckRequests.class);

    /** Without an acknowledgement for this long while holding sent messages, ask again with a ping. */
    static final long ACK_FALLBACK_NANOS = TimeUnit.MILLISECONDS.toNanos(200);
    /** An acknowledgement ping unanswered this long is given up on and asked again. */
    static final long PING_EXPIRY_NANOS = TimeUnit.SECONDS.toNanos(2);
    /** A peer that answers no ping at all for this long cannot confirm anything: what the path holds is failed. */
    static final long PEER_SILENT_NANOS = TimeUnit.SECONDS.toNanos(5);
    /** While the peer answers no ping, ask it this often whether it does again. */
    static final long UNANSWERED_RETRY_NANOS = TimeUnit.SECONDS.toNanos(1);

    private final ConnectionPath path;
    private final Connection connection;
    private final ConnectionEnvironment env;
    private final SendQueue queue;
    private final Acknowledgements acks;

    AckRequests(ConnectionPath path, SendQueue queue, Acknowledgements acks) {
        this.path = path;
        this.connection = path.connection();
        this.env = connection.env();
        this.queue = queue;
        this.acks = acks;
    }

    /**
     * Queues a ping from a free reserved port, unless one outstanding already covers every sent message (or
     * {@code force}, for liveness, says to ping anyway). Returns the connection to kick, or {@code null}.
     */
    PathConnection request(boolean force) {
        if (connection.ackFailure() != null) {
            return null;                              // maintain() asks whether it answers again: see retry()
        }
        return ping(force);
    }

    private PathConnection ping(boolean force) {
        if (path.state() != PathState.UP) {
            return null;
        }
        int slot = acks.slotForPing(queue.newestSent(), force);
        if (slot < 0) {
            return null;
        }
        OutgoingMessage ping = OutgoingMessage.ping(acks.port(slot));
        PathConnection kick = path.enqueueOwn(ping);
        acks.pingQueued(slot, ping.sequence);
        acks.progress(env.nanoTime());
        env.statistics().increment(Counter.ACK_PING_SENT);
        return kick;
    }

    /**
     * The periodic part, while the path is up: liveness asks for a ping ({@code livenessPing}); pings unanswered
     * too long expire; a peer silent to every ping is given up on; sent messages waiting too long are asked about
     * again. Returns the connection to kick, or {@code null}.
     */
    PathConnection maintain(long now, boolean livenessPing) {
        PathConnection kick = livenessPing ? request(true) : null;
        int expired = acks.expire(now, PING_EXPIRY_NANOS);
        if (expired > 0) {
            env.statistics().add(Counter.ACK_PING_EXPIRED, expired);
        }
        if (!connection.peerAcks().acknowledges() && acks.unanswered(now, PEER_SILENT_NANOS)) {
            giveUp(now);
        }
        if (kick == null && connection.ackFailure() != null) {
            if (acks.overdue(now, UNANSWERED_RETRY_NANOS)) {
                kick = retry();                       // does it answer again?
            }
        } else if (kick == null && queue.hasSent() && acks.overdue(now, ACK_FALLBACK_NANOS)) {
            kick = request(false);
        }
        return kick;
    }

    /**
     * Asks a peer that answers no ping whether it does again, from a port already quarantined if there is one; no
     * other ping goes meanwhile (a pong could release nothing the peer's sockets did not already see failed).
     */
    private PathConnection retry() {
        int slot = acks.slotForRetry();
        if (slot < 0 || path.state() != PathState.UP) {
            return ping(true);
        }
        OutgoingMessage ping = OutgoingMessage.ping(acks.port(slot));
        PathConnection kick = path.enqueueOwn(ping);
        acks.retryQueued(slot);
        acks.progress(env.nanoTime());
        env.statistics().increment(Counter.ACK_PING_SENT);
        return kick;
    }

    /**
     * The peer has answered none of our pings for {@link #PEER_SILENT_NANOS}: without pongs nothing it received can
     * be confirmed, so rather than hold senders forever the path fails every message it holds to its socket
     * (UNACKNOWLEDGED, which returns their budget and wakes blocked senders), and sends to the peer fail with
     * ETIMEDOUT until a pong shows it answers again.
     */
    private void giveUp(long now) {
        connection.peerAcks().answersNoPings(TimeUnit.NANOSECONDS.toMillis(PEER_SILENT_NANOS));
        env.statistics().increment(Counter.ACK_PEER_UNRESPONSIVE);
        int failed = queue.failAll(RdsDatagram.Failure.UNACKNOWLEDGED);
        acks.queueCleared();
        acks.stopAsking();
        acks.progress(now);
        log.debug("{}: failed {} messages nobody can confirm", path, failed);
    }
}
