package org.rds4j.core.spi;

import java.nio.ByteBuffer;

/**
 * Where the core writes frames during {@link ConnectionHandler#transmit}. Valid only during that call.
 */
public interface FrameSink {

    /**
     * Whether the connection still has room (below its high-water mark). The core stops writing when this turns
     * false and continues in the next {@link ConnectionHandler#transmit} call, which the transport makes once the
     * connection drains.
     *
     * @return true while more frames may be written
     */
    boolean isWritable();

    /**
     * Whether everything written before this pass has left the process (handed to the operating system): the core
     * writes its congestion map only then, so that a peer that stops reading never has more than one map waiting
     * for it in the transport, however often the map changes. A transport whose writes leave at once may keep this
     * default.
     *
     * @return true when nothing written earlier waits in the transport
     */
    default boolean isDrained() {
        return isWritable();
    }

    /**
     * Appends one frame: the remaining bytes of {@code header} then of {@code payload}, back to back. The sink
     * copies what it needs before returning; the buffers' positions are left unchanged.
     *
     * @param header the encoded 48-byte RDS header
     * @param payload the message's payload, possibly empty
     */
    void write(ByteBuffer header, ByteBuffer payload);

    /**
     * Appends one frame whose payload the sink may write without copying it: the payload is the message's own buffer,
     * lent with {@code loan} (see {@link PayloadLoan}). A sink that keeps no reference after returning copies, as
     * {@link #write(ByteBuffer, ByteBuffer)} does, which is what this default does.
     *
     * @param header the encoded 48-byte RDS header, copied
     * @param payload the message's payload, possibly empty; its position and limit are left unchanged
     * @param loan how to borrow the payload's bytes, or {@code null} if they may not be kept
     */
    default void write(ByteBuffer header, ByteBuffer payload, PayloadLoan loan) {
        write(header, payload);
    }

    /**
     * Room for {@code length} bytes of whole frames in the sink's own buffer, for the caller to write in place: one
     * call and no copy through an intermediate buffer for a run of small frames, where two {@link #write} calls per
     * frame cost more than the bytes they copy. The claimed bytes count as written at once ({@link #streamOffset}
     * moves past them); the caller fills every one of them, with absolute puts only (the buffer's position and limit
     * stay as they are), before its next call to this sink and before {@link ConnectionHandler#transmit} returns.
     * The default claims nothing.
     *
     * @param length the bytes wanted, at least 1
     * @return a buffer whose region from its position is the caller's for {@code length} bytes, or {@code null} if the
     *         sink has no contiguous room that large now (then write the frames one by one)
     */
    default ByteBuffer claim(int length) {
        return null;
    }

    /**
     * The number of bytes written to this connection so far, counting from its first byte.
     *
     * @return the stream offset after the last frame written, for {@link ConnectionHandler#onTransmitted}
     */
    long streamOffset();

    /**
     * A pass in an application thread ({@link TransportConnection#callerSink}) is over: the sink writes what it holds
     * and reports the stream offset, while that thread still holds the connection. The I/O thread's sink ends its
     * passes itself.
     */
    default void endPass() {
    }
}
