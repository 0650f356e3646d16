package org.rds4j;

import java.net.InetSocketAddress;
import java.util.Objects;

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
    private final int[] cookies = new int[RdsDatagram.MAX_ZEROCOPY_COOKIES];
    private int cookieCount;

    /** Creates an empty holder, to pass to {@code receive} again and again. */
    public RdsMessageInfo() {
    }

    /**
     * Fills this holder; used by implementations.
     *
     * @param datagram the received message or notification
     * @param truncated whether its payload was longer than the caller's buffer
     * @return this holder
     */
    public RdsMessageInfo set(RdsDatagram datagram, boolean truncated) {
        Objects.requireNonNull(datagram, "datagram is null: pass the received message or notification");
        this.kind = datagram.kind();
        this.source = datagram.source();
        this.destinationPort = datagram.destinationPort();
        this.length = datagram.length();
        this.truncated = truncated;
        this.arrivalNanos = datagram.arrivalNanos();
        this.congestionMask = datagram.congestionMask();
        this.failure = datagram.failure();
        int[] c = datagram.kind() == RdsDatagram.Kind.ZEROCOPY_COMPLETION ? datagram.zeroCopyCookies() : null;
        this.cookieCount = c == null ? 0 : c.length;
        if (c != null) {
            System.arraycopy(c, 0, cookies, 0, c.length);
        }
        return this;
    }

    /**
     * Fills this holder for a data message without a datagram object, so that a receive into the caller's buffer
     * allocates nothing; used by implementations.
     *
     * @param source the sender's address and RDS port
     * @param destinationPort the port the message was sent to
     * @param length the message's full length
     * @param truncated whether it was longer than the caller's buffer
     * @param arrivalNanos when it arrived, as {@link System#nanoTime()}
     * @return this holder
     */
    public RdsMessageInfo setData(InetSocketAddress source, int destinationPort, int length, boolean truncated,
                                  long arrivalNanos) {
        Objects.requireNonNull(source, "source is null: pass the sender's address and RDS port");
        // References are stored only when they change: a holder reused for every message lives in the old
        // generation, where each reference store runs the collector's write barrier (with G1, a memory fence when the
        // value lives in another region), and a stream's messages mostly repeat the kind and the source.
        if (this.kind != RdsDatagram.Kind.DATA) {
            this.kind = RdsDatagram.Kind.DATA;
        }
        if (this.source != source) {
            this.source = source;
        }
        this.destinationPort = destinationPort;
        this.length = length;
        this.truncated = truncated;
        this.arrivalNanos = arrivalNanos;
        this.congestionMask = 0;
        if (this.failure != null) {
            this.failure = null;
        }
        this.cookieCount = 0;
        return this;
    }

    /**
     * For {@link RdsDatagram.Kind#ZEROCOPY_COMPLETION}: how many cookies came.
     *
     * @return 1 to {@link RdsDatagram#MAX_ZEROCOPY_COOKIES}; 0 for other kinds
     */
    public int zeroCopyCookieCount() {
        return cookieCount;
    }

    /**
     * For {@link RdsDatagram.Kind#ZEROCOPY_COMPLETION}: one of the cookies.
     *
     * @param i from 0 to {@link #zeroCopyCookieCount()} - 1
     * @return the cookie of a message whose buffer is free again
     */
    public int zeroCopyCookie(int i) {
        if (i < 0 || i >= cookieCount) {
            throw new IndexOutOfBoundsException("cookie " + i + " of " + cookieCount);
        }
        return cookies[i];
    }

    /**
     * Whether the last item received was a message or a notification.
     *
     * @return see {@link RdsDatagram#kind()}
     */
    public RdsDatagram.Kind kind() {
        return kind;
    }

    /**
     * The sender.
     *
     * @return its address and RDS port (for {@link RdsDatagram.Kind#SEND_FAILED}: the failed message's
     *         destination)
     */
    public InetSocketAddress source() {
        return source;
    }

    /**
     * The RDS port the message was sent to.
     *
     * @return see {@link RdsDatagram#destinationPort()}
     */
    public int destinationPort() {
        return destinationPort;
    }

    /**
     * The message's full length, even when it was truncated.
     *
     * @return the length in bytes
     */
    public int length() {
        return length;
    }

    /**
     * Whether the message was longer than the buffer (the kernel's {@code MSG_TRUNC}).
     *
     * @return true if the rest of the message was discarded (or, with {@code MSG_PEEK}, not copied)
     */
    public boolean truncated() {
        return truncated;
    }

    /**
     * When the message was queued on the socket.
     *
     * @return see {@link RdsDatagram#arrivalNanos()}
     */
    public long arrivalNanos() {
        return arrivalNanos;
    }

    /**
     * For a congestion notification, the monitored ports that fired.
     *
     * @return see {@link RdsDatagram#congestionMask()}
     */
    public long congestionMask() {
        return congestionMask;
    }

    /**
     * For a send-failure notification, why.
     *
     * @return see {@link RdsDatagram#failure()}
     */
    public RdsDatagram.Failure failure() {
        return failure;
    }
}
