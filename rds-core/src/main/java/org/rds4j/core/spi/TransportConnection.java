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

    /**
     * Under caller I/O ({@link TransportInstance#callerIo}): a sink the application thread that holds the connection
     * fills in a pass and writes in its own context, ending the pass with {@link FrameSink#endPass}; null if it cannot
     * now (the connection is not up, or bytes the I/O thread was given are still unwritten), and the core then asks
     * for a pass on the I/O thread. Called holding the connection.
     *
     * @return the sink for one pass, or null
     */
    default FrameSink callerSink() {
        return null;
    }

    /**
     * Under caller I/O: reads what the socket holds, without blocking, in the calling thread, which holds the
     * connection, and hands it to {@link ConnectionHandler#onBytes} there. The transport reads on its I/O thread
     * until a {@link CallerPoll#READER} poll hands reading to callers, and takes it back at a
     * {@link CallerPoll#MAINTENANCE} poll with no reader's poll since the last one, at the end of the stream, or at an
     * error, which its I/O thread then reads and reports as usual. Never two threads read one socket, and the stream's
     * bytes reach the core in order.
     *
     * @param why who polls
     * @return the bytes read and handed to the core, 0 if none
     */
    default int readInCaller(CallerPoll why) {
        return 0;
    }

    /**
     * Asks the transport to call {@link ConnectionHandler#transmit} once {@code delayNanos} have passed, or sooner,
     * on the connection's I/O thread; called only on that thread. The core uses it for an acknowledgement that a
     * reply may carry: the pass at the deadline sends it on its own only if no reply did. While one such request is
     * pending, another changes nothing. A transport that cannot keep a deadline without work per call says so, and
     * the core acts at once.
     *
     * @param delayNanos how long the pass may wait, at most; the core asks for tens of microseconds
     * @return {@code true} if the pass will come; {@code false} if the transport does not delay passes
     */
    default boolean requestTransmitAfter(long delayNanos) {
        return false;
    }

    /**
     * Asks for a call of {@link ConnectionHandler#transmit} on the connection's I/O thread within {@code delayNanos},
     * from any thread: the backstop for messages an application thread queued to write itself later, under
     * busy-poll a stream's, which its sender writes in batches. While one such deadline is pending, further calls
     * change nothing. A pass that finds everything written costs little.
     *
     * @param delayNanos how long the pass may wait, at most; the core asks for a few hundred microseconds
     * @return {@code true} if the pass will come; {@code false} if the transport does not delay passes, and the core
     *         asks for one at once
     */
    default boolean requestTransmitWithin(long delayNanos) {
        return false;
    }

    /**
     * Stops or resumes reading from this connection; thread-safe and idempotent, the last call wins. While reading
     * is stopped the transport hands the core no bytes (a call of {@link ConnectionHandler#onBytes} already under
     * way finishes) and the peer is pushed back by the transport's own flow control (for TCP: the receive window
     * closes); writing goes on. The core stops reading a peer that has more unread messages queued than its bound
     * ({@code RdsStackConfig.peerReceiveBytes}).
     *
     * @param readable {@code false} to stop reading, {@code true} to resume
     */
    void setReadable(boolean readable);

    /** Closes the connection in an orderly way (for TCP: FIN); {@link ConnectionHandler#onClosed} follows. */
    void close();

    /** Aborts the connection (for TCP: RST), discarding unsent bytes; {@link ConnectionHandler#onClosed} follows. */
    void abort();
}
