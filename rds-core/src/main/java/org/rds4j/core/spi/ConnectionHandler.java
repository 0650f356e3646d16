package org.rds4j.core.spi;

import java.nio.ByteBuffer;

/**
 * The core's side of one transport connection. The transport calls these methods one at a time per connection, on
 * that connection's I/O thread (never two at once for the same connection), except {@link #onConnectFailed}, which
 * may come from any transport thread.
 */
public interface ConnectionHandler {

    /**
     * An outgoing connection opened by {@link TransportInstance#connect} is established.
     *
     * @param connection the new connection, whose events now come to this handler
     */
    void onConnected(TransportConnection connection);

    /**
     * An outgoing connection could not be established.
     *
     * @param cause why, such as a refused or timed-out connect
     */
    void onConnectFailed(Throwable cause);

    /**
     * Bytes arrived, in stream order. The handler consumes all remaining bytes of {@code data} before returning and
     * does not keep a reference to it.
     *
     * @param data the bytes received, valid only during this call
     */
    void onBytes(ByteBuffer data);

    /**
     * Where the transport may read the next bytes of the stream straight into, instead of into a buffer of its own
     * and then {@link #onBytes}: the rest of the payload of the message being received, or {@code null} to read as
     * usual. A transport that reads from a socket may ask before each read; one that does not need never ask.
     *
     * <p>A non-null answer hands the target's memory from its position on to the transport until it calls
     * {@link #onBytesReadInPlace}, which it must do next, once, whether or not the read brought anything.
     *
     * @return where to read, valid until {@link #onBytesReadInPlace}, or {@code null}
     */
    default ReadTarget readTarget() {
        return null;
    }

    /**
     * The read that followed a non-null {@link #readTarget()} put {@code n} bytes into its memory, from its
     * position on. They count as stream bytes in order, as if passed to {@link #onBytes}.
     *
     * @param n the bytes read, 0 if the read brought none (nothing available, end of stream, an error)
     */
    default void onBytesReadInPlace(int n) {
        throw new IllegalStateException("no read target was given");
    }

    /**
     * The connection can take frames: write as many as {@link FrameSink#isWritable()} allows. The transport flushes
     * after this call returns, so frames written in one call leave in as few system calls as possible.
     *
     * @param sink where to write frames, valid only during this call
     */
    void transmit(FrameSink sink);

    /**
     * Everything written to this connection up to {@code streamOffset} (counted from its first byte, as returned by
     * {@link FrameSink#streamOffset()}) has left the transport: for TCP, handed to the operating system.
     *
     * @param streamOffset a byte count from the start of the connection's stream
     */
    void onTransmitted(long streamOffset);

    /**
     * The connection is closed, by either side or by an error ({@code cause}, or {@code null} for an orderly close).
     * Called once, and nothing else is called after it.
     *
     * @param cause the error that closed it, or {@code null} for an orderly close
     */
    void onClosed(Throwable cause);
}
