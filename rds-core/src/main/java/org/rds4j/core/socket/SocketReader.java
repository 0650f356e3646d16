package org.rds4j.core.socket;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Optional;
import org.rds4j.EagainException;
import org.rds4j.EtimedoutException;
import org.rds4j.RdsDatagram;
import org.rds4j.RdsMessageInfo;
import org.rds4j.RdsSocket;
import org.rds4j.core.path.Arrival;
import org.rds4j.core.path.PostedBuffer;

/**
 * A socket's {@code receive} calls, the kernel's {@code rds_recvmsg}: how long to wait (SO_RCVTIMEO, non-blocking,
 * MSG_DONTWAIT), what an empty queue throws (EAGAIN or ETIMEDOUT), MSG_PEEK, and the copy out of the arrival the I/O
 * thread filled. The queue itself is {@link ReceiveQueue}; this holds no state of its own.
 */
final class SocketReader {
    private final ReceiveQueue queue;
    private final SocketOptions options;

    SocketReader(ReceiveQueue queue, SocketOptions options) {
        this.queue = queue;
        this.options = options;
    }

    /** {@link RdsSocket#receive()}: waits (if {@code blocking}) up to SO_RCVTIMEO, or for ever. */
    RdsDatagram receive(boolean blocking) throws IOException {
        RdsDatagram d = take(blocking ? blockingWait() : 0);
        if (d != null) {
            return d;
        }
        if (blocking && options.receiveTimeoutNanos() != 0) {
            throw new EtimedoutException("no message arrived within SO_RCVTIMEO");
        }
        throw new EagainException("no message is queued on this non-blocking socket; wait until one arrives");
    }

    /** {@link RdsSocket#receive(Duration)}: waits as long as it says, whatever the blocking mode. */
    Optional<RdsDatagram> receive(Duration timeout) throws IOException {
        return Optional.ofNullable(take(timeout.isNegative() ? 0 : SocketOptions.saturatedNanos(timeout)));
    }

    /** {@link RdsSocket#receive(ByteBuffer, RdsMessageInfo, int)}: into the caller's buffer, nothing allocated. */
    int receive(ByteBuffer dst, RdsMessageInfo info, int flags, boolean blocking) throws IOException {
        boolean peek = (flags & RdsSocket.MSG_PEEK) != 0;
        boolean wait = blocking && (flags & RdsSocket.MSG_DONTWAIT) == 0;
        // A blocking reader lends a buffer with room for a large message while it waits, so that such a message can
        // be decoded straight into it.
        ByteBuffer lend = wait && !peek && PostedBuffer.eligible(dst) ? dst : null;
        int room = dst.remaining();
        Arrival a = takeArrival(wait ? blockingWait() : 0, peek, lend, dst, info);
        if (a == null) {
            if (wait) {
                throw new EtimedoutException("no message arrived within SO_RCVTIMEO");
            }
            throw new EagainException("no message is queued; wait until one arrives");
        }
        if (a == Arrival.COPIED) {
            return Math.min(room, info.length());   // a run's message, or a peek: copied out under the queue's lock
        }
        if (a.notification() != null) {
            info.set(a.notification(), false);
            return 0;
        }
        // Straight from the arrival the I/O thread filled into the caller's buffer: the one copy on this side (none
        // if the I/O thread decoded the message into the buffer the caller lent while it waited).
        int len = a.length();
        int n = Math.min(room, len);
        if (!a.inPlace()) {
            dst.put(dst.position(), a.payload(), 0, n);
        }
        dst.position(dst.position() + n);
        info.setData(a.source(), a.port(), len, n < len, a.arrivalNanos());
        queue.recycle(a);                           // taken, not peeked: a peek comes back COPIED
        return n;
    }

    /** How long a blocking receive waits: SO_RCVTIMEO, or for ever. */
    private long blockingWait() {
        long t = options.receiveTimeoutNanos();
        return t == 0 ? Long.MAX_VALUE : t;
    }

    /** The next item as a datagram that owns a copy of its payload (this API hands the caller its own buffer). */
    private RdsDatagram take(long timeoutNanos) throws IOException {
        Arrival a = takeArrival(timeoutNanos, false, null, null, null);
        if (a == null) {
            return null;
        }
        if (a.notification() != null) {
            return a.notification();
        }
        if (a.detached()) {
            return new RdsDatagram(a.source(), a.port(), a.payload(), a.arrivalNanos());   // copied already
        }
        ByteBuffer copy = ByteBuffer.allocate(a.length());
        copy.put(0, a.payload(), 0, a.length());
        RdsDatagram d = new RdsDatagram(a.source(), a.port(), copy, a.arrivalNanos());
        queue.recycle(a);
        return d;
    }

    /**
     * Takes (or peeks) the next item. A message of a run, and a peeked one, is copied out on the way,
     * into {@code into} and {@code info} if given ({@link Arrival#COPIED} then comes back).
     */
    private Arrival takeArrival(long timeoutNanos, boolean peek, ByteBuffer lend, ByteBuffer into,
            RdsMessageInfo info) throws IOException {
        return queue.take(timeoutNanos, peek, lend, into, info);    // counted there, under its lock
    }
}
