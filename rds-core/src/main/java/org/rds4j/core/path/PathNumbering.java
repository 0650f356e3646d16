package org.rds4j.core.path;

import org.rds4j.core.spi.TransportConnection;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Which of the peer's numberings a path's received sequence numbers and acknowledgements belong to, and the events
 * that start a new one: the peer restarted (a new GEN_NUM), or the path's connection turned out to carry another of
 * the peer's paths, whose numbers were not this path's. Everything here runs on the connection's I/O thread, which
 * owns the path (docs/threading.md).
 *
 * <p>Each connection records the numbering it came up in ({@link PathConnection#numbering}); acknowledgements count
 * only from a connection of the current one ({@link PathReceiver#receive}), because after a restart the numbers
 * they refer to are the old peer's.
 */
final class PathNumbering {
    private static final Logger log = LoggerFactory.getLogger(PathNumbering.class);

    private final ConnectionPath path;
    /** Counts peer restarts: connections up before the last one carry acknowledgements of an older numbering. */
    private long numbering;
    /**
     * The last connection sat on another of the peer's paths (see {@link #dropPlacedElsewhere}): the peer numbers the
     * path it now puts us on from its own count, so the next connection expects the peer's numbers from the start.
     */
    private boolean renumber;

    PathNumbering(ConnectionPath path) {
        this.path = path;
    }

    /** The numbering the peer's acknowledgements must have been computed for. On the owner. */
    long current() {
        return numbering;
    }

    /** The path came up on {@code pc}. On the owner. */
    void up(PathConnection pc) {
        pc.numbering = numbering;
        if (renumber) {
            renumber = false;
            path.receiver().peerRestarted();
        }
    }

    /**
     * The peer restarted (new GEN_NUM): expect its numbering from the start and discard what it never acknowledged. The
     * numbering changes, so acknowledgements computed against the old one must not release anything any more: only
     * the connection the news came on ({@code currentIsNewPeer}) keeps being heard. Another path's connection may be
     * the old peer's or already the new one's (it reconnected before the probe came); which, nobody can tell, so it
     * is reset, and the connection that replaces it counts.
     */
    void peerRestarted(boolean currentIsNewPeer) {
        PathConnection old = null;
        int flushed;
        assert path.connection().ownerOnly();
        numbering++;
        PathConnection current = path.currentConnection();
        if (current != null && currentIsNewPeer) {
            current.numbering = numbering;
        } else if (current != null && path.state() == PathState.UP) {
            old = current;
            path.disconnecting();
        }
        flushed = path.queue().flushForPeerRestart();
        path.receiver().peerRestarted();
        path.acks().peerRestarted();       // the old peer's pings need no quarantine; the current one's do
        log.info("{}: the peer restarted (new generation); {} unacknowledged messages discarded, as the kernel does{}",
                path.name(), flushed, old != null ? "; resetting this path's connection" : "");
        if (old != null) {
            old.abort();                       // closed() follows; the next connection has the new numbering
        }
    }

    /**
     * Drops the current connection if it is still {@code tc}, which carried another of the peer's paths: the numbers
     * this path expects came from that path, so it expects from 0 again. {@link ConnectionPath#closed} follows from
     * the transport.
     */
    void dropConnection(TransportConnection tc, String reason) {
        PathConnection pc;
        assert path.connection().ownerOnly();
        pc = path.currentConnection();
        if (pc == null || pc.transport() != tc) {
            return;
        }
        path.receiver().peerRestarted();
        path.drop(pc, reason);
    }

    /**
     * Closes {@code pc} in order (FIN: a reset can wedge a 6.1 or 6.12 path) because the peer put it on another of its
     * paths (PathPlacement#peerPoked). The numbers the peer sent on it were that path's; its messages for this
     * path, which it may already mark as resent (it wrote them to its pokes, which we refused unread), come with
     * numbers from its own count, and taken against the old ones they would be dropped as duplicates (scenario 11
     * on 6.12 lost its first message so). So the next connection expects the peer's numbers from the start. Only if
     * the path is up on {@code pc} with nothing written and unacknowledged (a resend on the new connection could be
     * taken twice), checked on the owner, which also transmits on {@code pc}.
     *
     * @return whether it closed {@code pc}
     */
    boolean dropPlacedElsewhere(PathConnection pc, String reason) {
        assert path.connection().ownerOnly();
        if (pc == null || pc != path.currentConnection() || path.state() != PathState.UP
                || path.queue().hasSent()) {
            return false;
        }
        log.warn("{}: dropping the connection: {}", path.name(), reason);
        path.disconnecting();
        renumber = true;
        pc.close();
        return true;
    }
}
