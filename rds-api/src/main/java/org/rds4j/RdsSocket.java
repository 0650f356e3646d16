package org.rds4j;

import java.io.Closeable;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * A Reliable Datagram Socket: one socket sends reliable, ordered datagrams to any RDS port on any host, and receives
 * from all of them.
 *
 * <p>The life of a socket follows the kernel's {@code AF_RDS} sockets: {@link #open() open}, optionally set
 * options, {@link #bind bind} to a local address (required before sending), then {@link #send send} and
 * {@link #receive() receive} in any order, and {@link #close() close}. Messages from one socket to one destination
 * arrive complete and in the order they were sent; there is no order between different senders.
 *
 * <pre>{@code
 * try (RdsSocket s = RdsSocket.open()) {
 *     s.bind(new InetSocketAddress("127.0.0.1", 4000));
 *     s.send(ByteBuffer.wrap(bytes), new InetSocketAddress("127.0.0.2", 4000));
 *     RdsDatagram d = s.receive();   // d.source(), d.payload()
 * }
 * }</pre>
 *
 * <p>Sockets are safe for use by several threads at once.
 */
public interface RdsSocket extends Closeable {

    /**
     * Opens a socket on the JVM-wide {@linkplain RdsStack#defaultStack() default stack}.
     *
     * @return a new, unbound, blocking socket
     * @throws IOException the socket could not be opened
     */
    static RdsSocket open() throws IOException {
        return RdsStack.defaultStack().openSocket();
    }

    /**
     * Opens a socket on the given stack.
     *
     * @param stack the stack (the RDS host) the socket belongs to
     * @return a new, unbound, blocking socket
     * @throws IOException the socket could not be opened
     */
    static RdsSocket open(RdsStack stack) throws IOException {
        Objects.requireNonNull(stack, "stack is null: pass the RdsStack to open the socket on, or call open() for the"
                + " default stack");
        return stack.openSocket();
    }

    /**
     * Binds the socket to a local address and RDS port. Port 0 picks a free port, as the kernel does.
     *
     * @param local the address (one of the stack's) and RDS port
     * @throws EinvalException the address is the wildcard, multicast or broadcast, the port is the reserved port 1,
     *         or the socket is already bound
     * @throws EaddrinuseException another socket of this stack holds the address and port
     * @throws EaddrnotavailException the address is not local to this stack
     * @throws EnoprotooptException the chosen transport is not available
     */
    void bind(InetSocketAddress local) throws IOException;

    /**
     * The bound address and port.
     *
     * @return the address and port, or {@code null} before {@link #bind}
     */
    InetSocketAddress localAddress();

    /**
     * Sends the remaining bytes of {@code payload} as one message to {@code destination}, and advances the buffer's
     * position to its limit. Returns once the message is queued (RDS never waits for transmission); it is then
     * delivered reliably, in order, across connection losses, until the socket is closed.
     *
     * <p>A blocking socket waits while the send buffer is full (up to {@code SO_SNDTIMEO}) or the destination port
     * is congested; a non-blocking one fails instead.
     *
     * @param payload the message: the bytes from the buffer's position to its limit
     * @param destination the receiver's address and RDS port
     * @return the number of payload bytes sent
     * @throws EnotconnException the socket is not bound
     * @throws EmsgsizeException the payload is larger than 1 MiB or than the send buffer budget
     * @throws EagainException non-blocking and the send buffer is full
     * @throws EnobufsException non-blocking and the destination port is congested
     * @throws EtimedoutException blocking and {@code SO_SNDTIMEO} expired
     * @throws EinvalException the destination is not a unicast address
     * @throws EbadfException the socket is closed (also when closed while blocked here)
     */
    int send(ByteBuffer payload, InetSocketAddress destination) throws IOException;

    /**
     * Sends the remaining bytes of {@code payload} as one message without copying them: the kernel's
     * {@code MSG_ZEROCOPY} with an {@code RDS_CMSG_ZCOPY_COOKIE}. Needs {@link RdsSocketOptions#SO_ZEROCOPY} on.
     *
     * <p><b>Ownership.</b> rds4j keeps a view of the buffer's bytes (position to limit at the time of the call)
     * until it no longer needs them: when the peer has the message, or it was cancelled, failed or discarded, and
     * no write of the transport still reads them (a transport may send a large direct buffer from where it lies). Then
     * {@code cookie} is reported in a {@link RdsDatagram.Kind#ZEROCOPY_COMPLETION} notification read through
     * {@code receive()}, up to {@link RdsDatagram#MAX_ZEROCOPY_COOKIES} cookies per notification. Until its cookie
     * comes back, the caller must not change those bytes; it may move the buffer's position and limit. The
     * position is advanced to the limit, as {@link #send} does.
     *
     * <p>Everything else (budgets, congestion, blocking, errors) is as for {@link #send}.
     *
     * @param payload the message: the bytes from the buffer's position to its limit, lent until completion
     * @param destination the receiver's address and RDS port
     * @param cookie the caller's number for this message, reported back on completion
     * @return the number of payload bytes sent
     * @throws EinvalException {@link RdsSocketOptions#SO_ZEROCOPY} is off (the kernel's EINVAL for a cookie without
     *         zero-copy in effect)
     * @throws IOException as {@link #send}
     */
    int sendZeroCopy(ByteBuffer payload, InetSocketAddress destination, int cookie) throws IOException;

    /**
     * Receives the next message, waiting for one if the socket is blocking.
     *
     * @return the message, or a notification ({@link RdsDatagram#kind()})
     * @throws EagainException non-blocking and no message is queued
     * @throws EtimedoutException blocking and {@link RdsSocketOptions#SO_RCVTIMEO} expired
     * @throws EintrException the waiting thread was interrupted
     * @throws EbadfException the socket is closed, also when closed while this call was waiting
     */
    RdsDatagram receive() throws IOException;

    /**
     * Receives the next message, waiting at most {@code timeout} for one (whether or not the socket is blocking).
     *
     * @param timeout the longest wait; zero does not wait
     * @return the message, or empty if none arrived in time
     * @throws EbadfException the socket is closed, also when closed while this call was waiting
     */
    Optional<RdsDatagram> receive(Duration timeout) throws IOException;

    /**
     * Receives the next message into {@code dst}, as {@code recvmsg} does: copies as much of the payload as fits,
     * describes the message in {@code info} (source, full length, whether it was truncated, arrival time), and
     * allocates nothing. A message longer than {@code dst}'s remaining space is truncated and the rest discarded,
     * unless {@code flags} has {@link #MSG_PEEK}, which leaves the message queued. Notifications
     * ({@link RdsDatagram.Kind}) come first, with nothing copied.
     *
     * <p>While a blocking call waits with at least 64 KiB remaining in a writable {@code dst}, the next large message
     * may be decoded straight into it as it arrives, which saves copying it once more. So while the call waits, the
     * bytes of {@code dst} from its position to its limit may change even if the call then returns no message (a
     * timeout, a notification, another message that came first); only the bytes the call reports hold a message.
     * The call never returns while rds4j still writes into {@code dst}.
     *
     * @param dst where the payload is copied, from its position; its position advances by the bytes copied
     * @param info filled in with the message's source, length, kind and whether it was truncated
     * @param flags {@link #MSG_PEEK} and/or {@link #MSG_DONTWAIT}
     * @return the number of bytes copied
     * @throws EagainException non-blocking (or {@link #MSG_DONTWAIT}) and nothing is queued
     */
    int receive(ByteBuffer dst, RdsMessageInfo info, int flags) throws IOException;

    /** {@code recvmsg} flag: look at the next message without taking it off the queue. */
    int MSG_PEEK = 0x02;

    /** {@code recvmsg} flag: do not wait, whatever the socket's blocking mode. */
    int MSG_DONTWAIT = 0x40;

    /**
     * Drops every message this socket still holds for {@code destination} (address and port), sent or not, as the
     * kernel's {@code RDS_CANCEL_SENT_TO}: none of them will be sent (again), and their bytes return to the send
     * buffer. A message being written to the transport at that moment may still arrive. With
     * {@link RdsSocketOptions#RDS_RECVERR} on, each cancelled message is reported.
     *
     * @param destination the address and RDS port to give up on
     * @throws EnotconnException the socket is not bound
     */
    void cancelSentTo(InetSocketAddress destination) throws IOException;

    /**
     * Whether {@code receive()} would return at once: a message or notification is queued (the kernel's
     * {@code POLLIN}).
     *
     * @return true if something is queued
     */
    boolean isReadable();

    /**
     * Whether the send buffer has room (the kernel's {@code POLLOUT}): a send would not wait for buffer space. It may
     * still fail with {@link EnobufsException} if its destination is congested.
     *
     * @return true if the send budget has room
     */
    boolean isWritable();

    /**
     * Waits until every message this socket has sent so far has left its send buffer, that is, until the transport
     * has taken responsibility for it. Call it before {@link #close()} when the last messages must not be dropped:
     * like the kernel, closing a socket discards what it still has queued.
     *
     * @param timeout the longest wait
     * @return true if the send buffer emptied in time; an interrupt ends the wait early (the thread's interrupt
     *         flag stays set)
     * @throws EbadfException the socket is closed
     * @throws IOException the wait failed for another reason
     */
    boolean awaitSent(Duration timeout) throws IOException;

    /**
     * Chooses blocking (the default) or non-blocking sends and receives.
     *
     * @param blocking true to block, false to fail with {@link EagainException} or {@link EnobufsException}
     */
    void configureBlocking(boolean blocking);

    /**
     * Whether sends and receives block.
     *
     * @return true if blocking
     */
    boolean isBlocking();

    /**
     * Sets a socket option from {@link RdsSocketOptions}.
     *
     * @param <T> the option's type
     * @param option the option
     * @param value its new value
     * @return this socket
     * @throws EnoprotooptException the option is not an RDS socket option, or the transport does not exist
     * @throws EopnotsuppException the transport was already chosen
     * @throws EinvalException the value is out of range
     */
    <T> RdsSocket setOption(RdsSocketOption<T> option, T value) throws IOException;

    /**
     * Reads a socket option from {@link RdsSocketOptions}.
     *
     * @param <T> the option's type
     * @param option the option
     * @return its current value
     * @throws EnoprotooptException the option is not an RDS socket option
     * @throws IOException the option could not be read
     */
    <T> T getOption(RdsSocketOption<T> option) throws IOException;

    /**
     * The stack this socket belongs to.
     *
     * @return the stack
     */
    RdsStack stack();

    /**
     * Whether the socket is still open.
     *
     * @return false once {@link #close()} has been called
     */
    boolean isOpen();

    /**
     * Closes the socket: wakes blocked calls (they fail with {@link EbadfException}), discards messages not yet
     * delivered from its send buffer, and releases its port. Idempotent.
     */
    @Override
    void close();
}
