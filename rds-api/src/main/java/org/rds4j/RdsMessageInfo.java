package org.rds4j;

import java.net.InetSocketAddress;

/**
 * What {@link RdsSocket#receive(java.nio.ByteBuffer, RdsMessageInfo, int)} tells about the message it received: a
 * reusable holder, so that receiving into the caller's buffers allocates nothing. Not thread-safe.
 */
public final class RdsMessageInfo {
    private RdsDatagram.Kind kind = RdsDatagram.Kind.DATA;
    private InetSocketAddress source;
    private int destinationPort;
    private int length;
    private boolean truncated;
    private long arrivalNanos;
    private long congestionMask;
    private RdsDatagram.Failure failure;

    /** Fills this holder; used by implementations. */
    public RdsMessageInfo set(RdsDatagram d, boolean truncated) {
        this.kind = d.kind();
        this.source = d.source();
        this.destinationPort = d.destinationPort();
        this.length = d.length();
        this.truncated = truncated;
        this.arrivalNanos = d.arrivalNanos();
        this.congestionMask = d.congestionMask();
        this.failure = d.failure();
        return this;
    }

    /**
     * Fills this holder for a data message without a datagram object, so that a receive into the caller's buffer
     * allocates nothing; used by implementations.
     */
    public RdsMessageInfo setData(InetSocketAddress source, int destinationPort, int length, boolean truncated,
                                  long arrivalNanos) {
        this.kind = RdsDatagram.Kind.DATA;
        this.source = source;
        this.destinationPort = destinationPort;
        this.length = length;
        this.truncated = truncated;
        this.arrivalNanos = arrivalNanos;
        this.congestionMask = 0;
        this.failure = null;
        return this;
    }

    public RdsDatagram.Kind kind() {
        return kind;
    }

    /** The sender (for {@link RdsDatagram.Kind#SEND_FAILED}: the failed message's destination). */
    public InetSocketAddress source() {
        return source;
    }

    public int destinationPort() {
        return destinationPort;
    }

    /** The message's full length, even when it was truncated. */
    public int length() {
        return length;
    }

    /** Whether the message was longer than the buffer (the kernel's {@code MSG_TRUNC}). */
    public boolean truncated() {
        return truncated;
    }

    public long arrivalNanos() {
        return arrivalNanos;
    }

    public long congestionMask() {
        return congestionMask;
    }

    public RdsDatagram.Failure failure() {
        return failure;
    }
}
