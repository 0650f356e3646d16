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
    /** What a received item is: a message, or one of the notifications the kernel returns instead of data. */
    public enum Kind {
        /** A message from a peer. */
        DATA,
        /**
         * With {@link RdsSocketOptions#RDS_CONG_MONITOR} on: congestion maps of monitored ports changed
         * ({@link #congestionMask()}); the kernel's {@code RDS_CMSG_CONG_UPDATE}.
         */
        CONGESTION_UPDATE,
        /**
         * With {@link RdsSocketOptions#RDS_RECVERR} on: a message this socket sent will not be delivered
         * ({@link #failure()}); its destination and length are {@link #source()} and {@link #length()}.
         */
        SEND_FAILED,
        /**
         * Messages sent with {@link RdsSocket#sendZeroCopy} no longer need their buffers
         * ({@link #zeroCopyCookies()}); the kernel's {@code RDS_CMSG_ZCOPY_COMPLETION}.
         */
        ZEROCOPY_COMPLETION
    }

    /** Cookies one {@link Kind#ZEROCOPY_COMPLETION} notification carries at most ({@code RDS_MAX_ZCOOKIES}). */
    public static final int MAX_ZEROCOPY_COOKIES = 8;
    private static final int[] NO_COOKIES = {};

    /** Why a sent message will not be delivered. */
    public enum Failure {
        /** The application cancelled it ({@link RdsSocket#cancelSentTo}). */
        CANCELLED,
        /** The peer restarted before acknowledging it (the kernel discards such messages too). */
        PEER_RESTARTED,
        /**
         * The peer answered none of rds4j's acknowledgement pings for several seconds (a Linux host with
         * {@code net.rds.ping_enable=0}), so whether it has the message cannot be known; sends to it fail with
         * ETIMEDOUT until it answers again.
         */
        UNACKNOWLEDGED,
        /**
         * The peer's stack refuses this host: it ended {@link RdsStackConfig#peerFailureThreshold()} connections in
         * a row before sending any RDS frame, as a stack whose admission (allow-list, peer limit) leaves this host out
         * does. {@link #failureReason()} says what to change; sends to the peer fail with ECONNREFUSED until it
         * accepts again.
         */
        REFUSED,
        /**
         * The TLS handshakes with the peer failed that many times in a row (one side does not trust the other's
         * certificate, or ours presents none); {@link #failureReason()} gives the handshake's error. Sends to the
         * peer fail with EACCES until a handshake succeeds.
         */
        AUTHENTICATION_FAILED,
        /**
         * No connection to the peer could be made for longer than {@link RdsStackConfig#unreachableTimeout()}.
         */
        UNREACHABLE
    }

    private static final ByteBuffer EMPTY = ByteBuffer.allocate(0).asReadOnlyBuffer();

    private final Kind kind;
    private final InetSocketAddress source;
    private final int destinationPort;
    private final ByteBuffer payload;
    private final long arrivalNanos;
    private final long congestionMask;
    private final Failure failure;
    private final int failedLength;
    private final String failureReason;
    private final int[] cookies;

    /**
     * @param source the sender's address and RDS port (port 0 for a pong)
     * @param destinationPort the RDS port the message was addressed to
     * @param payload the payload; this object keeps a read-only view of it
     * @param arrivalNanos {@link System#nanoTime()} when the message was queued on the receiving socket
     */
    public RdsDatagram(InetSocketAddress source, int destinationPort, ByteBuffer payload, long arrivalNanos) {
        this(Kind.DATA, Objects.requireNonNull(source, "source is null: pass the sender's address and RDS port"),
                destinationPort, readOnly(payload), arrivalNanos, 0, null, payload.remaining(), NO_COOKIES, null);
    }

    private RdsDatagram(Kind kind, InetSocketAddress source, int destinationPort, ByteBuffer payload,
                        long arrivalNanos, long congestionMask, Failure failure, int failedLength, int[] cookies,
                        String failureReason) {
        this.cookies = cookies;
        this.failureReason = failureReason;
        this.kind = kind;
        this.source = source;
        this.destinationPort = destinationPort;
        this.payload = payload;
        this.arrivalNanos = arrivalNanos;
        this.congestionMask = congestionMask;
        this.failure = failure;
        this.failedLength = failedLength;
    }

    private static ByteBuffer readOnly(ByteBuffer payload) {
        Objects.requireNonNull(payload, "payload is null: pass the message's bytes (an empty ByteBuffer for a"
                + " zero-length message)");
        return payload.isReadOnly() ? payload : payload.asReadOnlyBuffer();
    }

    /**
     * A congestion notification; made by implementations.
     *
     * @param mask bit {@code port % 64} set for each monitored port that changed
     * @param nowNanos {@link System#nanoTime()} when the notification was queued
     * @return the notification
     */
    public static RdsDatagram congestionUpdate(long mask, long nowNanos) {
        return new RdsDatagram(Kind.CONGESTION_UPDATE, null, 0, EMPTY, nowNanos, mask, null, 0, NO_COOKIES, null);
    }

    /**
     * A send-failure notification; made by implementations.
     *
     * @param destination where the failed message was sent
     * @param length the failed message's payload length
     * @param failure why it will not be delivered
     * @param nowNanos {@link System#nanoTime()} when the notification was queued
     * @return the notification
     */
    public static RdsDatagram sendFailed(InetSocketAddress destination, int length, Failure failure,
                                         long nowNanos) {
        return sendFailed(destination, length, failure, null, nowNanos);
    }

    /**
     * A send-failure notification with the cause in words; made by implementations.
     *
     * @param destination where the failed message was sent
     * @param length the failed message's payload length
     * @param failure why it will not be delivered
     * @param reason the cause in words and what to do about it, or {@code null}
     * @param nowNanos {@link System#nanoTime()} when the notification was queued
     * @return the notification
     */
    public static RdsDatagram sendFailed(InetSocketAddress destination, int length, Failure failure, String reason,
                                         long nowNanos) {
        Objects.requireNonNull(destination, "destination is null: pass where the failed message was sent");
        return new RdsDatagram(Kind.SEND_FAILED, destination, 0, EMPTY, nowNanos, 0,
                Objects.requireNonNull(failure, "failure is null: pass why the message will not be delivered"), length,
                NO_COOKIES, reason);
    }

    /**
     * A zero-copy completion notification; made by implementations.
     *
     * @param cookies the cookies of messages whose buffers are free again, at most {@link #MAX_ZEROCOPY_COOKIES}
     * @param nowNanos {@link System#nanoTime()} when the notification was queued
     * @return the notification
     */
    public static RdsDatagram zeroCopyCompletion(int[] cookies, long nowNanos) {
        Objects.requireNonNull(cookies, "cookies is null: pass the cookies of the messages whose buffers are free");
        if (cookies.length == 0 || cookies.length > MAX_ZEROCOPY_COOKIES) {
            throw new IllegalArgumentException("a completion carries 1 to " + MAX_ZEROCOPY_COOKIES + " cookies, not "
                    + cookies.length);
        }
        return new RdsDatagram(Kind.ZEROCOPY_COMPLETION, null, 0, EMPTY, nowNanos, 0, null, 0, cookies.clone(), null);
    }

    /**
     * For {@link Kind#ZEROCOPY_COMPLETION}: the cookies of the messages whose buffers are free again, in the order
     * they were freed.
     *
     * @return a copy of the cookies; empty for other kinds
     */
    public int[] zeroCopyCookies() {
        return cookies.clone();
    }

    /**
     * Whether this is a message or a notification.
     *
     * @return {@link Kind#DATA} for a message, otherwise the kind of notification
     */
    public Kind kind() {
        return kind;
    }

    /**
     * For {@link Kind#CONGESTION_UPDATE}: the ports whose congestion state may have changed, as the kernel's
     * {@code RDS_CONG_MONITOR} mask ({@code 1L << (port % 64)}); 0 otherwise.
     *
     * @return the mask
     */
    public long congestionMask() {
        return congestionMask;
    }

    /**
     * For {@link Kind#SEND_FAILED}: why the message will not be delivered.
     *
     * @return the reason, or {@code null} for other kinds
     */
    public Failure failure() {
        return failure;
    }

    /**
     * For {@link Kind#SEND_FAILED}: the cause in words and what to do about it (a refusing peer's likely reason, a
     * TLS handshake's error), where the stack knows more than {@link #failure()} says.
     *
     * @return the explanation, or {@code null}
     */
    public String failureReason() {
        return failureReason;
    }

    /**
     * The sender: its address and the RDS port its socket is bound to. For {@link Kind#SEND_FAILED}, the
     * destination of the failed message; for {@link Kind#CONGESTION_UPDATE}, {@code null}.
     *
     * @return the address and RDS port
     */
    public InetSocketAddress source() {
        return source;
    }

    /**
     * The RDS port this message was sent to (the receiving socket's port).
     *
     * @return the port
     */
    public int destinationPort() {
        return destinationPort;
    }

    /**
     * The payload, read-only, from position 0 to the message length.
     *
     * @return the payload; empty for notifications
     */
    public ByteBuffer payload() {
        return payload;
    }

    /**
     * The payload length in bytes.
     *
     * @return the length; for {@link Kind#SEND_FAILED}, the failed message's length
     */
    public int length() {
        return kind == Kind.SEND_FAILED ? failedLength : payload.limit();
    }

    /**
     * When the message was queued on the receiving socket.
     *
     * @return the {@link System#nanoTime()} of its arrival
     */
    public long arrivalNanos() {
        return arrivalNanos;
    }

    @Override
    public String toString() {
        if (kind == Kind.CONGESTION_UPDATE) {
            return "RdsDatagram[congestion update, mask 0x" + Long.toHexString(congestionMask) + "]";
        }
        if (kind == Kind.SEND_FAILED) {
            return "RdsDatagram[send to " + source + " failed: " + failure + ", " + failedLength + " bytes"
                    + (failureReason == null ? "" : ": " + failureReason) + "]";
        }
        return "RdsDatagram[from " + source + " to port " + destinationPort + ", " + length() + " bytes]";
    }
}
