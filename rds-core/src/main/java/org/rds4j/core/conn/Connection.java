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

    /**
     * A connection with all its paths down; nothing is sent until a socket sends to the peer.
     *
     * @param local our address, which the peer sees as the source
     * @param peer the peer host's address
     * @param transportName the transport's name, such as {@code tcp}
     * @param transport the stack's instance of that transport, which opens and accepts its connections
     * @param env the stack this connection belongs to
     * @param peerMap the peer address's congestion map, shared by every connection to that address
     */
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

    /**
     * Our end's address.
     *
     * @return the local address, as the peer sees it
     */
    public InetAddress local() {
        return local;
    }

    /**
     * The peer host's address.
     *
     * @return the peer's address
     */
    public InetAddress peer() {
        return peer;
    }

    /**
     * The name of the transport the connection runs over.
     *
     * @return the transport's name, such as {@code tcp}
     */
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

    /**
     * The peer address's congestion map, as last received.
     *
     * @return the map; senders test the destination port's bit in it before queueing
     */
    public CongestionMap peerMap() {
        return peerMap;
    }

    /**
     * The path a socket bound to {@code sourcePort} sends on; one socket always uses one path, for order.
     *
     * @param sourcePort the sending socket's RDS port, 0 to 65535
     * @return the path its messages go on
     */
    public ConnectionPath pathFor(int sourcePort) {
        return paths[0];
    }

    /**
     * One of the connection's paths, the kernel's {@code rds_conn_path}.
     *
     * @param index the path index, 0 to {@code pathCount() - 1}
     * @return the path
     */
    public ConnectionPath path(int index) {
        return paths[index];
    }

    /**
     * How many paths the connection has.
     *
     * @return {@link #SUPPORTED_PATHS}
     */
    public int pathCount() {
        return paths.length;
    }

    /**
     * Whether this host is the one that opens transport connections to the peer.
     *
     * @return true if we connect, false if we wait for the peer to connect to us
     */
    public boolean initiates() {
        return Addresses.initiates(local, peer);
    }

    /**
     * The number of paths the peer offered in its last multipath probe or pong, 0 if it sent none.
     *
     * @return the peer's NPATHS
     */
    public int peerPaths() {
        return peerPaths;
    }

    void peerPaths(int n) {
        this.peerPaths = n;
    }

    /**
     * The peer's generation number from its last GEN_NUM extension, 0 if none was seen.
     *
     * @return the peer's GEN_NUM, an unsigned 32-bit value
     */
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
     *
     * @return true if the peer has been seen acknowledging
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

    /**
     * The connection as {@link org.rds4j.RdsStack#info()} reports it: each path is read under its own monitor.
     *
     * @return the snapshot
     */
    public org.rds4j.RdsConnectionInfo info() {
        return PathInfos.of(this);
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
        return "Connection[" + Addresses.host(local) + " -> " + Addresses.host(peer) + " over " + transportName
                + "]";
    }
}
