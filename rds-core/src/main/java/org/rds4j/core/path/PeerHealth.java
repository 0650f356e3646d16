package org.rds4j.core.path;

import org.rds4j.RdsAddresses;
import org.rds4j.RdsDatagram;
import org.rds4j.RdsPeerState;
import org.rds4j.core.stack.RdsCounters.Counter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the stack knows about a peer from path 0's connection attempts: whether it is {@link RdsPeerState#UP},
 * {@link RdsPeerState#UNREACHABLE} or {@link RdsPeerState#REFUSED}, and why sends to it fail meanwhile.
 *
 * <p>How a refusal is told apart from trouble on the network: a stack whose admission refuses us (allow-list, peer
 * limit, off-heap bound) takes the TCP connection and resets it at once, before it sends a byte; with TLS it resets
 * before the handshake, or the handshake fails. Network trouble makes no connection at all (refused by the operating
 * system, no route, a timeout), or breaks one that had carried bytes. So an attempt counts as refused when the TCP
 * connection was made and the peer ended it before sending anything, or the TLS handshake failed; as unreachable when
 * no connection was made. A peer that still holds an older connection from our address refuses a second one the
 * same way (a short while after we restart). And a kernel that lost a path can kill what it accepts for that path
 * hundreds of times in a row, for more than a minute, while it tears the old connection down (docs/protocol.md, the
 * reconnect backoff): indistinguishable on the wire from a refusal. So ends before any byte count as refusals only
 * while the peer has not been heard from since it was last unreachable (a new process there, or one never reached):
 * a peer that talked to us is not declared refusing by resets, only by failed TLS handshakes, which no kernel makes.
 * Only path 0 counts: the other paths connect only once path 0 is up. The reconnect backoff is left as it is (quick
 * retries are what gets a path back from such a kernel).
 *
 * <p>Threads: the connection's owner changes everything here; senders read {@link #refusal()} (volatile).
 */
final class PeerHealth {
    private static final Logger log = LoggerFactory.getLogger(PeerHealth.class);

    /** Why sends fail: the failure to report and the words for it. */
    record Refusal(RdsDatagram.Failure failure, String reason) { }

    private final Connection connection;
    private final ConnectionEnvironment env;

    // Owner only.
    private int refusedInARow;
    /** Whether the peer sent a byte since it was last unreachable: then resets alone no longer mean a refusal. */
    private boolean heardSinceAway;
    private int unreachableInARow;
    private long unreachableSince;
    /** The state last reported, {@code null} before the first report. */
    private RdsPeerState state;

    /** Set while the peer refuses us; senders read it. */
    private volatile Refusal refusal;

    PeerHealth(Connection connection) {
        this.connection = connection;
        this.env = connection.env();
    }

    /**
     * Why sends to the peer fail at once, or {@code null}: set while the peer refuses us.
     *
     * @return the refusal, read without a lock
     */
    Refusal refusal() {
        return refusal;
    }

    /** The state last reported, for inspection; on the owner. */
    RdsPeerState state() {
        return state;
    }

    /** Path 0 made a TCP connection: whatever follows, the network reaches the peer. On the owner. */
    void reached() {
        assert connection.ownerOnly();
        unreachableInARow = 0;
    }

    /**
     * The peer sent bytes on one of its connections: it is there and talks to us. Clears a refusal, and reports the
     * peer up if it was not. On the owner, at the first read of each connection.
     */
    void heard() {
        assert connection.ownerOnly();
        heardSinceAway = true;
        refusedInARow = 0;
        unreachableInARow = 0;
        if (state == RdsPeerState.UP) {
            return;
        }
        RdsPeerState before = state;
        if (refusal != null || before == RdsPeerState.UNREACHABLE) {
            log.info("{}: the peer is back: a connection carries RDS again{}", connection,
                    refusal != null ? "; sends to it go on" : "");
        }
        refusal = null;
        report(RdsPeerState.UP, before, before == null ? "a connection to the peer carries RDS"
                : "a connection to the peer carries RDS again after it was " + before);
    }

    /**
     * A connection of path 0 that we made ended before the peer sent anything, or its TLS handshake failed.
     *
     * @param authentication whether a TLS handshake failed
     * @param cause the transport's account, in words
     */
    void refused(boolean authentication, String cause) {
        assert connection.ownerOnly();
        unreachableInARow = 0;
        if (!authentication && heardSinceAway) {
            // A peer that talked to us: a kernel tearing down a lost path's old connection, or one that kept our
            // older connection, not a refusal (see the class comment).
            log.debug("{}: the peer ended a connection before sending anything ({}); it talked to us before, so"
                    + " this is not taken for a refusal", connection, cause);
            return;
        }
        refusedInARow++;
        env.statistics().increment(Counter.CONN_REFUSED_BY_PEER);
        if (refusedInARow < env.peerFailureThreshold()) {
            log.debug("{}: attempt {} in a row refused: {}", connection, refusedInARow, cause);
            return;
        }
        String peer = RdsAddresses.format(connection.peer());
        Refusal r = authentication
                ? new Refusal(RdsDatagram.Failure.AUTHENTICATION_FAILED, "the TLS handshake with " + peer
                        + " failed " + refusedInARow + " times in a row (" + cause + "). Each side must present a"
                        + " certificate the other's trust store trusts (the SSLContext given to RdsTlsConfig); sends"
                        + " to it fail until a handshake succeeds, and this stack keeps trying")
                : new Refusal(RdsDatagram.Failure.REFUSED, peer + " ended " + refusedInARow + " connections in a row"
                        + " before sending anything, as a stack does that refuses this host (" + cause + "): add "
                        + RdsAddresses.format(connection.local()) + " to that stack's allowPeers, or raise its"
                        + " maxPeers (its conn_peer_refused counts the refusals and its log names the reason). Sends"
                        + " to it fail until it accepts, and this stack keeps trying");
        Refusal before = refusal;
        refusal = r;
        int failed = connection.failQueued(r.failure(), r.reason());
        if (before == null || before.failure() != r.failure()) {
            log.warn("{}: {}; {} queued messages failed (RDS_RECVERR reports them)", connection, r.reason(),
                    failed);
            report(RdsPeerState.REFUSED, state, r.reason());
        } else if (failed > 0) {
            log.debug("{}: failed {} more messages to a refusing peer", connection, failed);
        }
    }

    /**
     * An attempt of path 0 made no connection at all.
     *
     * @param cause the transport's failure
     */
    void unreachable(Throwable cause) {
        assert connection.ownerOnly();
        refusedInARow = 0;
        long now = env.nanoTime();
        if (unreachableInARow++ == 0) {
            unreachableSince = now;
        }
        env.statistics().increment(Counter.CONN_CONNECT_FAILED);
        if (unreachableInARow < env.peerFailureThreshold()) {
            return;
        }
        String words = ConnectionPath.inWords(cause);
        if (state != RdsPeerState.UNREACHABLE) {
            // A peer that refused and is now gone cannot be said to refuse any more: sends queue again, as the
            // kernel's do, until the timeout below. Whatever answers next is a new process.
            refusal = null;
            heardSinceAway = false;
            log.info("{}: unreachable: {} attempts in a row made no connection (the last: {}); this stack keeps"
                    + " trying", connection, unreachableInARow, words);
            report(RdsPeerState.UNREACHABLE, state, unreachableInARow + " attempts in a row made no connection ("
                    + words + ")");
        }
        long timeout = env.unreachableTimeoutNanos();
        if (timeout > 0 && now - unreachableSince >= timeout) {
            String reason = RdsAddresses.format(connection.peer()) + " has been unreachable for more than "
                    + java.util.concurrent.TimeUnit.NANOSECONDS.toMillis(timeout) + " ms (unreachableTimeout; the"
                    + " last attempt: " + words + ")";
            int failed = connection.failQueued(RdsDatagram.Failure.UNREACHABLE, reason);
            if (failed > 0) {
                log.info("{}: failed {} queued messages: {}", connection, failed, reason);
            }
        }
    }

    private void report(RdsPeerState now, RdsPeerState before, String reason) {
        state = now;
        env.peerStateChanged(connection, now, before, reason);
    }
}
