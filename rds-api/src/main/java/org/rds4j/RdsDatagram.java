package org.rds4j;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.Objects;

/**
 * One received RDS message: where it came from and its payload.
 *
 * <p>The payload buffer is read-only and belongs to the caller once {@link RdsSocket#receive()} returned it; rds4j
 * never touches it again. Its position is 0 and its limit the message length.
 */
public final class RdsDatagram {
    private final InetSocketAddress source;
    private final int destinationPort;
    private final ByteBuffer payload;
    private final long arrivalNanos;

    /**
     * @param source the sender's address and RDS port (port 0 for a pong)
     * @param destinationPort the RDS port the message was addressed to
     * @param payload the payload; this object keeps a read-only view of it
     * @param arrivalNanos {@link System#nanoTime()} when the message was queued on the receiving socket
     */
    public RdsDatagram(InetSocketAddress source, int destinationPort, ByteBuffer payload, long arrivalNanos) {
        this.source = Objects.requireNonNull(source, "source");
        this.destinationPort = destinationPort;
        this.payload = payload.isReadOnly() ? payload : payload.asReadOnlyBuffer();
        this.arrivalNanos = arrivalNanos;
    }

    /** The sender: its address and the RDS port its socket is bound to. */
    public InetSocketAddress source() {
        return source;
    }

    /** The RDS port this message was sent to (the receiving socket's port). */
    public int destinationPort() {
        return destinationPort;
    }

    /** The payload, read-only, from position 0 to the message length. */
    public ByteBuffer payload() {
        return payload;
    }

    /** The payload length in bytes. */
    public int length() {
        return payload.limit();
    }

    /** {@link System#nanoTime()} when the message was queued on the receiving socket. */
    public long arrivalNanos() {
        return arrivalNanos;
    }

    @Override
    public String toString() {
        return "RdsDatagram[from " + source + " to port " + destinationPort + ", " + length() + " bytes]";
    }
}
