package org.rds4j.core.spi;

import java.nio.ByteBuffer;

/**
 * The core's side of one transport connection. The transport calls these methods one at a time per connection, on
 * that connection's I/O thread (never two at once for the same connection), except {@link #onConnectFailed}, which
 * may come from any transport thread.
 */
public interface ConnectionHandler {

    /** An outgoing connection opened by {@link TransportInstance#connect} is established. */
    void onConnected(TransportConnection connection);

    /** An outgoing connection could not be established. */
    void onConnectFailed(Throwable cause);

    /**
     * Bytes arrived, in stream order. The handler consumes all remaining bytes of {@code data} before returning and
     * does not keep a reference to it.
     */
    void onBytes(ByteBuffer data);

    /**
     * The connection can take frames: write as many as {@link FrameSink#isWritable()} allows. The transport flushes
     * after this call returns, so frames written in one call leave in as few system calls as possible.
     */
    void transmit(FrameSink sink);

    /**
     * Everything written to this connection up to {@code streamOffset} (counted from its first byte, as returned by
     * {@link FrameSink#streamOffset()}) has left the transport: for TCP, handed to the operating system.
     */
    void onTransmitted(long streamOffset);

    /**
     * The connection is closed, by either side or by an error ({@code cause}, or {@code null} for an orderly close).
     * Called once, and nothing else is called after it.
     */
    void onClosed(Throwable cause);
}
