package org.rds4j.core.path;

import org.rds4j.core.stack.RdsCounters.Counter;
import org.rds4j.core.wire.ExtensionHeaders;
import org.rds4j.core.wire.RdsHeader;

/**
 * The protocol's own messages that a path answers or reads as they arrive: pings (to port 0) get a pong; the
 * multipath probe (a ping from port 1) and its pong carry the peer's number of paths and its generation. The
 * kernel's ping handling in {@code rds_recv_incoming} and its handshake extension reading.
 */
final class PingHandler {
    /** The source port of the kernel's multipath probe ping ({@code RDS_FLAG_PROBE_PORT}). */
    static final int PROBE_PORT = 1;
    /**
     * Pongs a path holds at most (queued, or written and not yet acknowledged). A peer that acknowledges, or answers
     * our acknowledgement pings, releases them within a round trip; only one that pings and never does reaches this,
     * and its further pings go unanswered (counted) instead of growing the queue without bound.
     */
    static final int MAX_PONGS_HELD = 256;

    private final Connection connection;
    private final ConnectionEnvironment env;

    PingHandler(Connection connection) {
        this.connection = connection;
        this.env = connection.env();
    }

    /**
     * Handles {@code h} if it is a ping, a probe or a probe's pong (after the path's sequence and acknowledgement
     * handling). Returns true if it was one of those (nothing to deliver); {@code path} queues the answer.
     */
    boolean handle(RdsHeader h, ConnectionPath path) {
        int sport = h.sourcePort();
        int dport = h.destinationPort();
        if (dport == 0) {
            if (sport != 0) {                       // a pong to port 0 would answer itself forever: ignore it
                env.statistics().increment(Counter.RECV_PING);
                answer(sport, path);
                if (sport == PROBE_PORT) {
                    readHandshake(h, path, false);
                }
            }
            return true;
        }
        if (sport == 0 && dport == PROBE_PORT) {     // the pong to a multipath probe is the protocol's own
            readHandshake(h, path, true);
            return true;
        }
        return false;
    }

    /**
     * The probe path 0 sends each time it comes up: it offers our paths, says that our source ports encode path
     * indexes, and carries our generation, so the peer learns of a restart of ours and we of one of its.
     */
    OutgoingMessage probe() {
        env.statistics().increment(Counter.SEND_PONG);
        return OutgoingMessage.probe(env.paths(), env.generation());
    }

    /** A pong goes back on the same path, unless the pinging port is congested at the peer. */
    private void answer(int pingSourcePort, ConnectionPath path) {
        if (connection.peerMap().isCongested(pingSourcePort)) {
            return;
        }
        if (path.queue().pongsHeld() >= MAX_PONGS_HELD) {
            env.statistics().increment(Counter.RECV_PING_UNANSWERED);
            return;
        }
        env.statistics().increment(Counter.SEND_PONG);
        path.queue().pongQueued();
        path.enqueue(OutgoingMessage.pong(pingSourcePort, env.paths(), env.generation()));
    }

    /** Reads the multipath handshake extensions of a probe ping or pong. */
    private void readHandshake(RdsHeader h, ConnectionPath path, boolean pong) {
        long npaths = ExtensionHeaders.find(h.extensions(), ExtensionHeaders.NPATHS);
        boolean encodesPaths = ExtensionHeaders.find(h.extensions(), ExtensionHeaders.SPORT_IDX) >= 0;
        long gen = ExtensionHeaders.find(h.extensions(), ExtensionHeaders.GEN_NUM);
        // First: a restarted peer's offer applies to the new numbering. No GEN_NUM (a 6.1 kernel) where there was one
        // means another implementation took the address: a restart too.
        connection.peerGeneration(gen > 0 ? gen : 0, path);
        connection.peerOffered(npaths, encodesPaths, pong);
    }
}
