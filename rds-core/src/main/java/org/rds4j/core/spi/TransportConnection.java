package org.rds4j.core.spi;

import java.net.InetSocketAddress;

/** One established transport connection (for TCP: one socket), as the core sees it. Methods are thread-safe. */
public interface TransportConnection {

    /**
     * The local end: the RDS host address and the transport's own port.
     *
     * @return our address and transport port (for TCP: the listening port if the peer connected, else an ephemeral one)
     */
    InetSocketAddress localAddress();

    /**
     * The remote end: the peer RDS host address and the transport's own port.
     *
     * @return the peer's address and transport port
     */
    InetSocketAddress remoteAddress();

    /**
     * Asks the transport to call {@link ConnectionHandler#transmit} soon, on the connection's I/O thread. Cheap and
     * idempotent while a call is already pending, so the core can call it after every queued message.
     */
    void requestTransmit();

    /** Closes the connection in an orderly way (for TCP: FIN); {@link ConnectionHandler#onClosed} follows. */
    void close();

    /** Aborts the connection (for TCP: RST), discarding unsent bytes; {@link ConnectionHandler#onClosed} follows. */
    void abort();
}
