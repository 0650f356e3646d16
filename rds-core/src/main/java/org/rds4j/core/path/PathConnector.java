package org.rds4j.core.path;

import org.rds4j.core.spi.ConnectionHandler;
import org.rds4j.core.spi.TransportConnection;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How a path gets a transport connection of its own making: who may connect which path, the attempts and their
 * outcomes, the poke of the larger address, and the reconnect backoff (the kernel's {@code rds_connect_worker},
 * {@code rds_queue_reconnect} and the who-connects rules of docs/protocol.md); and the connections the peer makes
 * ({@link #accept}). Everything here runs on the connection's I/O thread, which owns the path; the reconnect
 * timer hands its attempts to that thread.
 */
final class PathConnector {
    private static final Logger log = LoggerFactory.getLogger(PathConnector.class);

    private final ConnectionPath path;
    private final Connection connection;
    private final ConnectionEnvironment env;
    private final int index;
    private final ReconnectTimer reconnect;

    PathConnector(ConnectionPath path) {
        this.path = path;
        this.connection = path.connection();
        this.env = connection.env();
        this.index = path.index();
        this.reconnect = new ReconnectTimer(env);
    }

    /**
     * The peer (the smaller address) connected to us. Taken if the path has no connection, or only our own poke in
     * flight; not while another connection is up or closing ({@link PathPlacement#accept} then keeps it aside).
     *
     * @param tc the transport connection the peer opened
     * @return the handler for the connection, or {@code null} if the path cannot take it now
     */
    ConnectionHandler accept(TransportConnection tc) {
        PathConnection pc;
        assert connection.ownerOnly();
        PathState state = path.state();
        if (path.isShutdown() || state == PathState.UP || state == PathState.DISCONNECTING) {
            log.debug("{}: no second connection while {}", path.name(), state);
            return null;
        }
        pc = new PathConnection(path);
        pc.accepted = true;
        pc.attach(tc);
        path.connecting(pc);                     // a poke still in flight is now stale
        path.cameUp(pc);
        pc.requestTransmit();                        // the congestion map, then whatever queued while down
        return pc;
    }

    /** Whether a reconnect waits for its timer. On the owner. */
    boolean pending() {
        return reconnect.pending();
    }

    /**
     * The path is up on {@code pc}: a reconnect still pending is moot, and the backoff restarts (see
     * ReconnectTimer#up). On the owner.
     */
    void up(PathConnection pc) {
        pc.upNanos = env.nanoTime();
        reconnect.up();
    }

    /**
     * The path's connection {@code pc} closed ({@code wasUp}: after it had come up). If it proved itself (the peer
     * sent on it, or it lasted the backoff's maximum) it was no refusal: quick retries again. A connection the peer
     * opened that waits aside for a path may take this one now; if none does, the path connects again if it may.
     * On the owner.
     */
    void afterClose(PathConnection pc, boolean wasUp) {
        if (pc.received() || (wasUp && env.nanoTime() - pc.upNanos >= env.reconnectMaxNanos())) {
            reconnect.proven();
        }
        connection.placement().placeAside();
        if (path.state() == PathState.DOWN && mayReconnect()) {
            scheduleReconnect();
        }
    }

    /** Opens a transport connection, or on the larger address pokes the peer. On the owner. */
    void connectNow() {
        assert connection.ownerOnly();
        if (path.isShutdown() || env.isClosing()) {
            return;
        }
        if (index > 0 && (!connection.initiates() || index >= connection.lanes()
                || !connection.multipath().confirmed())) {
            return;                                  // only the smaller address opens extra paths, once agreed
        }
        if (index > 0 && !connection.multipath().peerEncodesPaths() && !connection.lanesUpBelow(index)) {
            // A peer without SPORT_IDX (Linux 6.1, 6.12) puts each connection on its first free path: only when the
            // paths connect one at a time in index order does each land on the path whose numbers it carries.
            // The path below, once up, connects the next (Connection#pathUp).
            return;
        }
        PathConnection attempt = new PathConnection(path);
        path.connecting(attempt);
        log.debug("{} path {}: connecting", connection, index);
        // Our source port encodes the path index (SPORT_IDX), so the acceptor can place the connection.
        connection.transport().connect(connection.local(), connection.peer(), index, attempt);
    }

    /** The transport connected an attempt of ours. */
    void connected(PathConnection pc, TransportConnection tc) {
        assert connection.ownerOnly();
        PathConnection kick = null;
        if (pc != path.currentConnection() || path.state() != PathState.CONNECTING) {
            tc.close();                          // stale: a newer attempt or an accepted connection won
            return;
        }
        if (index == 0) {
            connection.health().reached();
        }
        if (connection.initiates() && index > 0 && !connection.multipath().peerEncodesPaths()
                && !connection.lanesUpBelow(index)) {
            // A path below went down while this one connected: a peer that takes its first free path may have
            // put this connection in that path's place. Nothing was sent on it yet; it connects again once the
            // paths below are up (Connection#pathUp, or its reconnect finding them up). Closed, not reset: a
            // reset while a 6.1 or 6.12 kernel writes on the path can wedge it there (docs/protocol.md).
            log.debug("{} path {}: a path below went down meanwhile; closing the new connection", connection,
                    index);
            path.down();
            tc.close();
            scheduleReconnect();
            return;
        }
        if (connection.initiates()) {
            kick = path.cameUp(pc);
        } else {
            // The larger address only pokes: the peer resets this connection and connects back, and its
            // connection is the one that carries traffic. Close ours, wait for theirs.
            log.debug("{} path {}: poked the peer, waiting for it to connect back", connection, index);
            path.down();
            tc.close();
            if (path.hasUnsent()) {
                scheduleReconnect();       // poke again later if the peer does not come
            }
        }
        if (kick != null) {
            kick.requestTransmit();
        }
    }

    /** The transport could not connect an attempt of ours. */
    void connectFailed(PathConnection pc, Throwable cause) {
        assert connection.ownerOnly();
        if (pc != path.currentConnection()) {
            return;
        }
        log.debug("{} path {}: connect failed: {}", connection, index, cause.toString());
        path.down();
        if (index == 0 && !path.isShutdown() && !env.isClosing()) {
            if (cause instanceof org.rds4j.core.spi.ConnectResetException && !connection.initiates()) {
                // Our poke, reset before we had finished connecting: the smaller peer answers pokes so and connects
                // back, and we close a poke at once anyway, which counts as nothing. The peer was reached.
                connection.health().reached();
            } else if (cause instanceof org.rds4j.core.spi.PeerRefusedException r) {
                connection.health().refused(r.authentication(), r.getMessage());
            } else {
                connection.health().unreachable(cause);
            }
        }
        if (mayReconnect()) {
            scheduleReconnect();
        }
    }

    /**
     * Whether this path connects again after losing its connection: on the smaller address every path in use; on
     * the larger only path 0, and only to poke the peer because messages wait (the kernel's rule). On the owner.
     */
    boolean mayReconnect() {
        if (connection.initiates()) {
            return index == 0 || index < connection.lanes();
        }
        return index == 0 && path.hasUnsent();
    }

    /**
     * Connects now if the path is down: the peer poked us (it has the larger address and something to send), or the
     * lanes just opened. A reconnect waiting out its backoff is not waited for: the peer is evidently there. The
     * backoff itself keeps its size (the connection, once up, restarts it; see ReconnectTimer#up).
     */
    void connectIfDown() {
        assert connection.ownerOnly();
        if (path.state() == PathState.DOWN) {
            reconnect.cancel();
            connectNow();
        }
    }

    /** Drops a pending reconnect: the path is being retired. On the owner. */
    void cancelReconnect() {
        reconnect.cancel();
    }

    /** Schedules the next attempt with the backoff's delay; the timer hands it to the owner. On the owner. */
    void scheduleReconnect() {
        if (path.isShutdown() || env.isClosing()) {
            return;
        }
        reconnect.schedule(token -> connection.runOnOwner(() -> reconnect(token)));
    }

    private void reconnect(Object token) {
        assert connection.ownerOnly();
        if (reconnect.claim(token) && path.state() == PathState.DOWN && mayReconnect()) {
            connectNow();                     // a poke is no longer due once its messages are gone
        }
    }
}
