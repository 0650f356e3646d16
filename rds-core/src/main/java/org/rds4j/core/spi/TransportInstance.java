package org.rds4j.core.spi;

import java.io.IOException;
import java.net.InetAddress;

/** One transport serving one stack: its listeners and outgoing connections. */
public interface TransportInstance extends AutoCloseable {

    /** Whether a socket may bind this address with this transport (for TCP: an address of this machine). */
    boolean canBind(InetAddress address);

    /**
     * Starts accepting connections to {@code local}; called by the core when the first socket binds that
     * address. Incoming connections are offered to {@link TransportHost#accept}.
     *
     * @throws IOException the address cannot be listened on (say, the port is in use there)
     */
    void listen(InetAddress local) throws IOException;

    /** Stops accepting connections to {@code local}; established connections stay. */
    void unlisten(InetAddress local);

    /**
     * Opens a connection from {@code local} to {@code peer}, asynchronously. Exactly one of
     * {@link ConnectionHandler#onConnected} or {@link ConnectionHandler#onConnectFailed} follows, on the
     * connection's I/O thread or another transport thread.
     */
    void connect(InetAddress local, InetAddress peer, ConnectionHandler handler);

    /** Closes every listener and connection of this instance. */
    @Override
    void close();
}
