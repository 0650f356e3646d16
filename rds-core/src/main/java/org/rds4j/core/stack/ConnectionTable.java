package org.rds4j.core.stack;

import java.io.IOException;
import java.net.InetAddress;
import java.util.Collection;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import org.rds4j.core.cong.CongestionMap;
import org.rds4j.core.path.Connection;
import org.rds4j.core.util.SnapshotSet;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A stack's connections, one per local address, peer and transport (the kernel's connection hash), the same
 * connections by local address for a socket's send, and the congestion map each peer address shares among its
 * connections. Lookups take no lock; creating a connection and forgetting one (with its peer's map) take the table's
 * lock, so that a connection being forgotten is gone before another is made for its peer.
 */
final class ConnectionTable {
    private static final Logger log = LoggerFactory.getLogger(ConnectionTable.class);

    private final Map<ConnectionKey, Connection> connections = new ConcurrentHashMap<>();
    /** The same connections as an array, for walks that must not allocate (congestion updates). */
    private final SnapshotSet<Connection> snapshot = new SnapshotSet<>(Connection[]::new);
    /** The same connections by local address and transport, then by peer: what a socket's send looks up. */
    private final Map<ConnectionKey, Map<InetAddress, Connection>> peerTables = new ConcurrentHashMap<>();
    private final Map<InetAddress, CongestionMap> peerMaps = new ConcurrentHashMap<>();
    private final Object lock = new Object();

    /** The connection to a peer over a transport if there is one; never creates one. */
    Connection get(InetAddress local, InetAddress peer, String transport) {
        return connections.get(new ConnectionKey(local, peer, transport));
    }

    /** The connection to a peer over a transport, made now with the peer's shared map if there is none. */
    Connection getOrCreate(InetAddress local, InetAddress peer, TransportBinding transport, CoreStack stack)
            throws IOException {
        ConnectionKey key = new ConnectionKey(local, peer, transport.name());
        synchronized (lock) {
            Connection c = connections.get(key);
            if (c == null) {
                c = new Connection(local, peer, transport.name(), transport.instance(), stack, peerMap(peer));
                connections.put(key, c);
                snapshot.add(c);
                peerTable(local, transport.name()).put(peer, c);
                log.debug("new {}", c);
            }
            return c;
        }
    }

    /**
     * Retires {@code c} and drops it from every table, with its peer's congestion map if no other connection has
     * that peer.
     *
     * The paths are retired on the connection's I/O thread, which owns them, under the table's lock (so a sender that
     * finds the connection retired waits for it to be gone); the caller waits for that thread.
     *
     * @return whether it was forgotten (false: it became useful or a path came up meanwhile)
     */
    boolean forget(Connection c) {
        return c.call(() -> retireAndDrop(c), false);
    }

    private boolean retireAndDrop(Connection c) {
        synchronized (lock) {
            if (!c.retire()) {
                return false;
            }
            connections.remove(new ConnectionKey(c.local(), c.peer(), c.transportName()), c);
            snapshot.remove(c);
            Map<InetAddress, Connection> table = peerTables.get(new ConnectionKey(c.local(), c.local(),
                    c.transportName()));
            if (table != null) {
                table.remove(c.peer(), c);
            }
            boolean peerStillKnown = false;
            for (Connection o : connections.values()) {
                peerStillKnown |= o.peer().equals(c.peer());
            }
            if (!peerStillKnown) {
                peerMaps.remove(c.peer());
            }
            return true;
        }
    }

    /**
     * The connections from {@code local} over {@code transport}, by peer address. A socket keeps this map from bind
     * on, so a send finds its connection with one lookup that allocates nothing.
     */
    Map<InetAddress, Connection> peerTable(InetAddress local, String transport) {
        return peerTables.computeIfAbsent(new ConnectionKey(local, local, transport), k -> new ConcurrentHashMap<>());
    }

    /** The congestion map of a peer address, shared by all connections to it. */
    CongestionMap peerMap(InetAddress peer) {
        return peerMaps.computeIfAbsent(peer, a -> new CongestionMap());
    }

    /** The peers' congestion maps, by address; a live view. */
    Map<InetAddress, CongestionMap> peerMaps() {
        return peerMaps;
    }

    /** Every connection; a live view. */
    Collection<Connection> all() {
        return connections.values();
    }

    /** Every connection at one moment, as an array the caller must not change: walking it allocates nothing. */
    Connection[] snapshot() {
        return snapshot.members();
    }

    int size() {
        return connections.size();
    }

    private static final class ConnectionKey {
        final InetAddress local;
        final InetAddress peer;
        final String transport;

        ConnectionKey(InetAddress local, InetAddress peer, String transport) {
            this.local = local;
            this.peer = peer;
            this.transport = transport;
        }

        @Override
        public boolean equals(Object o) {
            if (!(o instanceof ConnectionKey)) {
                return false;
            }
            ConnectionKey k = (ConnectionKey) o;
            return local.equals(k.local) && peer.equals(k.peer) && transport.equals(k.transport);
        }

        @Override
        public int hashCode() {
            return Objects.hash(local, peer, transport);
        }
    }
}
