package org.rds4j.core.spi;

import java.io.IOException;
import java.net.InetAddress;

/** One transport serving one stack: its listeners and outgoing connections. */
public interface TransportInstance extends AutoCloseable {
    /** The modulus of the source-port encoding of path indexes: the kernel's {@code RDS_MPATH_WORKERS}, 8. */
    int PATH_PORT_MODULUS = 8;

    /**
     * Whether a socket may bind this address with this transport (for TCP: an address of this machine).
     *
     * @param address the address a socket asks to bind
     * @return true if this transport can carry messages from it
     */
    boolean canBind(InetAddress address);

    /**
     * Starts accepting connections to {@code local}; called by the core when the first socket binds that
     * address. Incoming connections are offered to {@link TransportHost#accept}.
     *
     * @param local one of this stack's addresses
     * @throws IOException the address cannot be listened on (say, the port is in use there)
     */
    void listen(InetAddress local) throws IOException;

    /**
     * Stops accepting connections to {@code local}; established connections stay.
     *
     * @param local an address passed to {@link #listen} before
     */
    void unlisten(InetAddress local);

    /**
     * Opens a connection from {@code local} to {@code peer}, asynchronously. Exactly one of
     * {@link ConnectionHandler#onConnected} or {@link ConnectionHandler#onConnectFailed} follows, on the
     * connection's I/O thread or another transport thread.
     *
     * <p>{@code pathIndex} is how the core asks for the kernel's source-port encoding of multipath (SPORT_IDX): when
     * it is 0 or more, the connection's local transport port must be congruent to it modulo
     * {@link #PATH_PORT_MODULUS}, so that the acceptor can tell which path the connection is for. The transport picks
     * such a port (for TCP: from the system's ephemeral range, trying the next candidate while one is in use) and
     * fails the connect only when none is free.
     *
     * <p>Every handler call of the connection, and of every connection accepted from {@code peer} to {@code local},
     * comes on {@link #ioThread ioThread(local, peer)}.
     *
     * @param local our address, which the connection is made from
     * @param peer the peer host's address
     * @param pathIndex the path index to encode in the local port, 0 to 7, or -1 for any local port
     * @param handler told of the outcome, then of every event of the connection
     */
    void connect(InetAddress local, InetAddress peer, int pathIndex, ConnectionHandler handler);

    /**
     * The I/O thread that owns the core's connection between {@code local} and {@code peer}: the same thread for the
     * same pair for as long as this instance is open, and the thread of every handler call of the connections
     * between them, opened or accepted. Transports with several I/O threads spread pairs of addresses over them.
     *
     * @param local our address
     * @param peer the peer host's address
     * @return the owning thread
     */
    IoThread ioThread(InetAddress local, InetAddress peer);

    /**
     * Whether application threads may do this instance's socket I/O themselves ({@link TransportConnection#callerSink},
     * {@link TransportConnection#readInCaller}): then a connection's state belongs to whichever thread holds its flag,
     * the I/O thread or an application thread, and the I/O thread takes the flag around every handler call and task.
     * TCP under busy-poll (decision 0031) or with tcp.callerIo (decision 0033; on by default on epoll, decision 0040);
     * false for a transport that does not say.
     *
     * @return whether connections of this instance use caller I/O
     */
    default boolean callerIo() {
        return false;
    }

    /** Closes every listener and connection of this instance. */
    @Override
    void close();
}
