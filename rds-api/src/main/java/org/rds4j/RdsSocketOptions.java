package org.rds4j;

import java.time.Duration;

/**
 * The socket options of an {@link RdsSocket}, named as in the kernel's RDS.
 *
 * <p>Buffer sizes follow the kernel's arithmetic exactly, so that numbers carry over: setting {@code SO_SNDBUF} to
 * {@code v} makes the socket's buffer {@code 2v} (Linux doubles the value to leave room for bookkeeping), reading it
 * back returns {@code 2v}, and RDS lets queued payload use half of the buffer, {@code v}. The defaults are the usual
 * Linux ones, 212992, so a socket may hold 106496 payload bytes unsent and as many unread before its port is marked
 * congested.
 */
public final class RdsSocketOptions {
    private RdsSocketOptions() {
    }

    /**
     * Send buffer size in bytes. Payload bytes count against half of it from {@code send()} until the message is
     * released; a single message larger than half of it fails with {@link EmsgsizeException}.
     */
    public static final RdsSocketOption<Integer> SO_SNDBUF = new RdsSocketOption<>("SO_SNDBUF", Integer.class);

    /**
     * Receive buffer size in bytes. When more than half of it is queued unread, the socket's port is marked
     * congested and senders are told to back off; a soft limit: messages in flight are still accepted.
     */
    public static final RdsSocketOption<Integer> SO_RCVBUF = new RdsSocketOption<>("SO_RCVBUF", Integer.class);

    /**
     * The transport by name ({@code "tcp"}, {@code "loopback"}); may be set once, before {@code bind}. Without it the
     * socket uses its stack's default transport. Reading it returns {@code null} while no transport is chosen.
     */
    public static final RdsSocketOption<String> SO_RDS_TRANSPORT =
            new RdsSocketOption<>("SO_RDS_TRANSPORT", String.class);

    /**
     * How long a blocking send may wait for send-buffer space, and for a destination port the peer marks congested;
     * {@link Duration#ZERO} (the default) waits forever. Expiry fails the send with {@link EtimedoutException} and
     * nothing is sent. The kernel bounds only the first wait; bounding the wait for a congested port is rds4j's own,
     * so that a thread that sends to a socket it reads itself later fails instead of hanging.
     */
    public static final RdsSocketOption<Duration> SO_SNDTIMEO =
            new RdsSocketOption<>("SO_SNDTIMEO", Duration.class);

    /**
     * How long a blocking {@code receive()} waits for a message; {@link Duration#ZERO} (the default) waits forever.
     * Expiry fails the call with {@link EtimedoutException}, as the kernel's {@code recvmsg} does (not EAGAIN).
     * {@code receive(Duration)} takes its own timeout instead.
     */
    public static final RdsSocketOption<Duration> SO_RCVTIMEO =
            new RdsSocketOption<>("SO_RCVTIMEO", Duration.class);

    /**
     * Read-only: the payload bytes this socket holds for sending, queued or sent and not yet known delivered, which
     * count against half of {@code SO_SNDBUF}. The kernel's RDS has no such option; it is rds4j's window onto the
     * send buffer, for monitoring and tests.
     */
    public static final RdsSocketOption<Integer> RDS_SEND_QUEUED =
            new RdsSocketOption<>("RDS_SEND_QUEUED", Integer.class);

    /**
     * Congestion monitoring, the kernel's {@code RDS_CONG_MONITOR}. When on, a non-blocking send that fails with
     * {@link EnobufsException} adds its destination port to the socket's monitor mask (bit {@code port % 64}); when a
     * peer's congestion map next changes, {@code receive()} returns a {@link RdsDatagram.Kind#CONGESTION_UPDATE}
     * notification (ahead of data) with the monitored bits that fired, and those bits leave the mask. Over TCP, as in
     * the kernel, every monitored bit fires on any map update. Turning it off clears the mask and what is pending.
     */
    public static final RdsSocketOption<Boolean> RDS_CONG_MONITOR =
            new RdsSocketOption<>("RDS_CONG_MONITOR", Boolean.class);

    /**
     * Send-failure reporting, after the kernel's {@code RDS_RECVERR}. When on, every message of this socket that will
     * not be delivered (cancelled with {@link RdsSocket#cancelSentTo}, or discarded because the peer restarted)
     * produces a {@link RdsDatagram.Kind#SEND_FAILED} notification on {@code receive()}.
     */
    public static final RdsSocketOption<Boolean> RDS_RECVERR = new RdsSocketOption<>("RDS_RECVERR", Boolean.class);

    /**
     * Zero-copy sends, after the kernel's {@code SO_ZEROCOPY}: when on, {@link RdsSocket#sendZeroCopy} lends the
     * caller's buffer to rds4j instead of copying it, and reports the message's cookie when the buffer is free again.
     * Off by default; turning it off does not affect messages already sent.
     */
    public static final RdsSocketOption<Boolean> SO_ZEROCOPY = new RdsSocketOption<>("SO_ZEROCOPY", Boolean.class);
}
