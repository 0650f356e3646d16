package org.rds4j.core.path;

import java.util.ArrayList;
import org.rds4j.core.stack.RdsCounters.Counter;
import org.rds4j.core.spi.ConnectionHandler;
import org.rds4j.core.spi.TransportConnection;
import org.rds4j.core.spi.TransportInstance;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Which path takes a connection the peer opens ({@link #accept}), the connections that wait aside, unread, while no
 * path is free for them ({@link AsideConnection}), whether each of a connection's transport connections sits on the
 * peer's path of the same index, and what is done when it does not. Both ends number each path on their own; a
 * connection the peer took for another of its paths carries that path's numbers and leaves this path's messages
 * waiting on the peer's side. Two cases:
 * <ul>
 * <li>we accept, and the peer said SPORT_IDX (kernels from 7.0, rds4j): a connection taken on the first free path
 * before the peer's probe arrived is dropped once its source port names another path ({@link #dropMisplaced});</li>
 * <li>we connect, and the peer places by "first free path" (6.1, 6.12): a poke while our path 0 is up may mean the
 * peer put our connection elsewhere ({@link #peerPoked}).</li>
 * </ul>
 * Its work runs on the connection's I/O thread, which owns the paths; the stack's timer only hands over what waits.
 */
final class PathPlacement {
    private static final Logger log = LoggerFactory.getLogger(PathPlacement.class);

    /** How long after a poke the peer's own messages must have appeared on path 0 for its placement to be right. */
    static final long POKE_CHECK_NANOS = 1_000_000_000L;
    /** How many times a poke's check waits for messages still unacknowledged before it gives up. */
    static final int POKE_CHECKS = 10;
    /**
     * How long a connection the peer opened may wait aside for a free path before it is reset. A path frees when its
     * old connection's close is read, or the lanes open at the peer's probe: milliseconds. What waits longer waits
     * behind a connection that looks up and may be dead (RdsStackConfig.livenessInterval); it is reset, as a
     * refusal, and the peer connects again.
     */
    static final long ASIDE_LIMIT_NANOS = 5_000_000_000L;
    /** How many connections may wait aside at once: one for each path there can be. */
    static final int ASIDE_MAX = TransportInstance.PATH_PORT_MODULUS;
    private static final String MISPLACED = "the peer connected to us although this path is up, and sent nothing on it"
            + " since: it placed this connection on another of its paths (a kernel before 7.0); connecting again";

    private final Connection connection;
    private final ConnectionPath[] paths;
    private final Multipath multipath;
    private final ConnectionEnvironment env;
    /** Path 0's connection whose poke check is due (see {@link #peerPoked}): one check at a time. */
    private final DueCheck<PathConnection> pokeChecked = new DueCheck<>();
    /** Connections the peer opened when no path was free for them, oldest first. On the owner. */
    private final ArrayList<AsideConnection> aside = new ArrayList<>(ASIDE_MAX);

    PathPlacement(Connection connection, ConnectionPath[] paths, Multipath multipath, ConnectionEnvironment env) {
        this.connection = connection;
        this.paths = paths;
        this.multipath = multipath;
        this.env = env;
    }

    /**
     * The peer opened a transport connection to us (we have the larger address): which path takes it
     * ({@link #place}). When none is free now the connection waits aside, unread ({@link AsideConnection}), until
     * one is or {@link #ASIDE_LIMIT_NANOS} pass, and is reset only then: the peer may already have sent on it, and
     * what TCP acknowledged there is delivered for the peer (docs/reliability.md). Refused ({@code null}) only when
     * {@link #ASIDE_MAX} connections already wait; the peer tries again.
     */
    ConnectionHandler accept(TransportConnection tc) {
        ConnectionHandler h = place(tc);
        int n = multipath.lanes();
        if (h == null && encodesPaths()) {
            after(0, this::dropMisplaced);       // a connection taken before SPORT_IDX was known may be in the way
        }
        if (h != null) {
            return h;
        }
        if (aside.size() >= ASIDE_MAX || env.isClosing()) {
            env.statistics().increment(Counter.CONN_ACCEPT_REFUSED);
            log.debug("{}: refusing {}: no free path for it among {}, and {} wait already", connection, tc, n,
                    aside.size());
            return null;
        }
        AsideConnection a = new AsideConnection(connection, tc, env.nanoTime());
        tc.setReadable(false);                   // before the transport reads a byte of it (TransportHost#accept)
        aside.add(a);
        env.statistics().increment(Counter.CONN_ACCEPT_DEFERRED);
        log.debug("{}: {} waits: no free path for it among {}", connection, tc, n);
        after(ASIDE_LIMIT_NANOS, () -> checkLimit(a));
        proveBusyPaths(tc);
        return a;
    }

    /** Pings on the paths that {@code tc} waits for, so that a dead connection in its way shows itself. */
    private void proveBusyPaths(TransportConnection tc) {
        int first = firstCandidate(tc);
        for (int i = first, end = endOfCandidates(first); i < end; i++) {
            paths[i].proveConnection();
        }
    }

    /**
     * The path that takes {@code tc} now, if one does: the first free one among its candidates. {@code null} when
     * they are all busy.
     */
    private ConnectionHandler place(TransportConnection tc) {
        ConnectionHandler h = null;
        int first = firstCandidate(tc);
        for (int i = first, end = endOfCandidates(first); i < end && h == null; i++) {
            h = paths[i].connector().accept(tc);
        }
        return h;
    }

    /**
     * The first path {@code tc} may take. A peer that encodes path indexes in its source ports (it said so with
     * SPORT_IDX) gets the path its port names, as kernels from 7.0 on do; otherwise the first free path among those in
     * use (path 0 alone until the lanes are agreed), as 6.1 does.
     */
    private int firstCandidate(TransportConnection tc) {
        return encodesPaths() ? tc.remoteAddress().getPort() % TransportInstance.PATH_PORT_MODULUS : 0;
    }

    /** One past the last path a connection whose first candidate is {@code first} may take (none beyond the lanes). */
    private int endOfCandidates(int first) {
        int n = multipath.lanes();
        return encodesPaths() ? Math.min(first + 1, n) : n;
    }

    /** Whether the lanes are open and the peer places each connection by its source port. */
    private boolean encodesPaths() {
        return multipath.lanes() > 1 && multipath.peerEncodesPaths();
    }

    /**
     * A path went down, or the lanes opened: the connections waiting aside are placed, oldest first, on whatever is
     * free for them now. On the owner.
     */
    void placeAside() {
        assert connection.ownerOnly();
        for (int i = 0; i < aside.size(); ) {
            AsideConnection a = aside.get(i);
            if (a.closedEmpty()) {
                aside.remove(i);                 // ended by the peer with nothing sent: nothing to place
                continue;
            }
            ConnectionHandler h = place(a.transport);
            if (h == null) {
                i++;
                continue;
            }
            aside.remove(i);
            log.debug("{}: {} placed after {} µs aside", connection, a.transport,
                    (env.nanoTime() - a.asideNanos) / 1000);
            a.place(h);
        }
    }

    /** The transport closed a connection that waits aside. On the owner. */
    void asideClosed(AsideConnection a) {
        if (a.closedEmpty()) {
            aside.remove(a);
        } else {
            placeAside();                        // its bytes go to a path now if one is free
        }
    }

    /** A waiting connection that is still there at its limit is reset; the peer connects again. On the owner. */
    private void checkLimit(AsideConnection a) {
        if (a.waiting() && aside.contains(a)) {
            giveUp(a, "no path was free for it within " + ASIDE_LIMIT_NANOS / 1_000_000 + " ms");
        }
    }

    /** Resets a waiting connection, counted as a refusal. On the owner. */
    void giveUp(AsideConnection a, String why) {
        aside.remove(a);
        env.statistics().increment(Counter.CONN_ACCEPT_REFUSED);
        log.debug("{}: resetting {}, which waited: {}{}", connection, a.transport, why,
                a.earlyBytes() > 0 ? "; " + a.earlyBytes() + " bytes it carried are lost" : "");
        a.drop();
    }

    /** The connection shuts down: connections waiting aside are reset. On the owner. */
    void shutdown() {
        while (!aside.isEmpty()) {
            aside.remove(aside.size() - 1).drop();
        }
    }

    /**
     * The peer, the larger address, connected to us: it has messages for a path it sees down. Path 0 connects if it
     * is down. If path 0 is up, either the poke raced our connection's start (the peer's messages for path 0 then
     * arrive on our connection once it takes it), or the peer disagrees: a kernel before 7.0 (no SPORT_IDX) put our
     * connection on another of its paths because its own was still closing when ours came (a stack restarted on the
     * address), and its messages for path 0 wait for a connection that never comes (CI, scenario 11 on 6.12; its
     * blocked sender pokes a burst within milliseconds, then never again). A check {@link #POKE_CHECK_NANOS} later
     * tells them apart; see {@link #checkPoke}.
     */
    void peerPoked() {
        if (paths[0].state() != PathState.UP) {
            paths[0].connectIfDown();
            return;
        }
        if (multipath.peerEncodesPaths()) {
            return;                                  // a peer that places by port never disagrees so
        }
        PathConnection pc = paths[0].upConnection();
        if (pc == null || !pokeChecked.mark(pc)) {
            return;                                  // down meanwhile, or this connection's check is already due
        }
        long seen = pc.peerInitiatedCount();
        after(POKE_CHECK_NANOS, () -> checkPoke(pc, seen, 1));
    }

    /**
     * A poke's check, a while after the poke: if path 0 is still up on {@code pc} and the peer has sent nothing of its own on it
     * since the poke (pongs to our pings do not count: a misplaced connection carries those), the peer's messages for
     * path 0 are not coming, and every path in use with nothing unacknowledged closes in order and connects again, to
     * be placed afresh ({@link PathNumbering#dropPlacedElsewhere}), path 0 first. Messages unacknowledged on path 0
     * postpone the check (a resend on a new connection could be taken twice), at most {@link #POKE_CHECKS} times.
     */
    private void checkPoke(PathConnection pc, long seen, int attempt) {
        if (paths[0].upConnection() != pc || pc.peerInitiatedCount() != seen || multipath.peerEncodesPaths()) {
            pokeChecked.done(pc);
            return;                                  // placed afresh anyway, the peer's messages came (a race), or
        }                                            // its probe since says it places by port
        if (!paths[0].numbering().dropPlacedElsewhere(pc, MISPLACED)) {
            if (attempt < POKE_CHECKS) {                 // messages unacknowledged: look again later
                after(POKE_CHECK_NANOS, () -> checkPoke(pc, seen, attempt + 1));
            } else {
                pokeChecked.done(pc);
            }
            return;
        }
        int lanes = multipath.lanes();
        for (int i = 1; i < lanes; i++) {
            paths[i].numbering().dropPlacedElsewhere(paths[i].upConnection(), MISPLACED);
        }
    }

    /**
     * On the accepting side, once the peer said SPORT_IDX: drops connections that sit on a path their source port does
     * not name. They were placed on the first free path before the peer's probe arrived (a 7.x kernel that already
     * knew the number of paths opens them all at once, and any may come first); the peer reconnects them and each
     * then lands on its own path. Kernels from 7.0 drop a misplaced path 0 the same way.
     */
    void dropMisplaced() {
        if (connection.initiates() || !multipath.peerEncodesPaths()) {
            return;
        }
        for (int i = 0; i < paths.length; i++) {
            TransportConnection tc = paths[i].transportConnection();
            int port = tc == null ? i : tc.remoteAddress().getPort();
            if (port % TransportInstance.PATH_PORT_MODULUS != i) {
                paths[i].numbering().dropConnection(tc, "the peer's port " + port + " names path "
                        + port % TransportInstance.PATH_PORT_MODULUS + ", not " + i);
            }
        }
    }

    /** Runs {@code task} on the connection's I/O thread after {@code nanos}, unless the stack is closing. */
    private void after(long nanos, Runnable task) {
        connection.schedule(task, nanos);
    }
}
