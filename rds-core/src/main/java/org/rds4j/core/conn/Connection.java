package org.rds4j.core.conn;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import org.rds4j.core.cong.CongestionMap;
import org.rds4j.core.spi.TransportInstance;

/**
 * Everything one RDS host keeps about one peer host over one transport: the kernel's {@code rds_connection}. All
 * sockets of the local address share it, so N sockets talking to a peer need one transport connection, not N.
 *
 * <p>rds4j uses one path per connection today; the kernel's multipath (up to 8 paths, agreed with the NPATHS
 * probe) is answered with NPATHS=1, which makes a kernel peer use one path too.
 */
public final class Connection {
    /** The number of paths rds4j offers in a multipath probe and its pong. */
    public static final int SUPPORTED_PATHS = 1;

    private final InetAddress local;
    private final InetAddress peer;
    private final String transportName;
    private final TransportInstance transport;
    private final ConnectionEnvironment env;
    private final CongestionMap localMap;
    private final CongestionMap peerMap;
    private final ConnectionPath[] paths;
    private final InetSocketAddress[] sourceCache = new InetSocketAddress[256];
    private volatile int peerPaths;
    private volatile long peerGeneration;
    private volatile boolean peerAcks;

    public Connection(InetAddress local, InetAddress peer, String transportName, TransportInstance transport,
                      ConnectionEnvironment env, CongestionMap peerMap) {
        this.local = local;
        this.peer = peer;
        this.transportName = transportName;
        this.transport = transport;
        this.env = env;
        this.localMap = env.localMap(local);
        this.peerMap = peerMap;
        this.paths = new ConnectionPath[SUPPORTED_PATHS];
        for (int i = 0; i < paths.length; i++) {
            paths[i] = new ConnectionPath(this, i);
        }
    }

    public InetAddress local() {
        return local;
    }

    public InetAddress peer() {
        return peer;
    }

    public String transportName() {
        return transportName;
    }

    TransportInstance transport() {
        return transport;
    }

    ConnectionEnvironment env() {
        return env;
    }

    CongestionMap localMap() {
        return localMap;
    }

    /** The peer address's congestion map, as last received. */
    public CongestionMap peerMap() {
        return peerMap;
    }

    /** The path a socket bound to {@code sourcePort} sends on; one socket always uses one path, for order. */
    public ConnectionPath pathFor(int sourcePort) {
        return paths[0];
    }

    public ConnectionPath path(int index) {
        return paths[index];
    }

    public int pathCount() {
        return paths.length;
    }

    /** Whether this host is the one that opens transport connections to the peer. */
    public boolean initiates() {
        return Addresses.initiates(local, peer);
    }

    /** The number of paths the peer offered in its last multipath probe or pong, 0 if it sent none. */
    public int peerPaths() {
        return peerPaths;
    }

    void peerPaths(int n) {
        this.peerPaths = n;
    }

    /** The peer's generation number from its last GEN_NUM extension, 0 if none was seen. */
    public long peerGeneration() {
        return peerGeneration;
    }

    /**
     * A GEN_NUM arrived in a multipath probe or pong. A different non-zero value than before means the peer
     * restarted: as the kernel does, every path starts its sequence numbers again and discards what it sent and the
     * old peer did not acknowledge (the new peer never asked for it).
     */
    void peerGeneration(long generation) {
        long previous = peerGeneration;
        peerGeneration = generation;
        if (previous != 0 && previous != generation) {
            peerAcks = false;                      // learnt again from the new peer
            for (ConnectionPath p : paths) {
                p.peerRestarted();
            }
        }
    }

    /**
     * Whether the peer acknowledges what it receives (h_ack): true once it sent a non-zero h_ack, which only rds4j
     * does over TCP. Messages to such a peer are released by its acknowledgements; to others, by answered pings.
     */
    public boolean peerAcks() {
        return peerAcks;
    }

    void peerAcks(boolean acks) {
        this.peerAcks = acks;
    }

    /**
     * The source address of a message from the peer's {@code port}: cached, so that steady traffic between a few
     * ports allocates no address objects. Racy by design: a miss only costs an allocation.
     */
    InetSocketAddress source(int port) {
        int slot = port & (sourceCache.length - 1);
        InetSocketAddress a = sourceCache[slot];
        if (a == null || a.getPort() != port) {
            a = new InetSocketAddress(peer, port);
            sourceCache[slot] = a;
        }
        return a;
    }

    /** Queues an update of our congestion map on every path that is up (the kernel sends it on any path). */
    public void queueCongestionUpdate() {
        paths[0].queueCongestionUpdate();
    }

    /** Drops every transport connection; called when the stack closes. */
    public void shutdown() {
        for (ConnectionPath p : paths) {
            p.shutdown();
        }
    }

    @Override
    public String toString() {
        return "Connection[" + local.getHostAddress() + " -> " + peer.getHostAddress() + " over " + transportName
                + "]";
    }
}
