package org.rds4j.core.conn;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import org.rds4j.RdsDatagram;
import org.rds4j.core.spi.ReadTarget;

/**
 * A received message waiting on a socket: where it came from, where it went, when, and its payload. Reused: the
 * receiving socket keeps a pool of them with their buffers, the I/O thread fills one straight from the network
 * buffer, and the application's {@code receive} copies it out and gives it back. One owner at a time.
 */
public final class Arrival implements ReadTarget {
    InetSocketAddress source;
    int port;
    long arrivalNanos;
    /** Position 0, limit = length once filled. */
    ByteBuffer payload;
    /** The link in a delivery batch and in the socket's receive queue. */
    Arrival next;
    /** The budget of the peer it came from, {@code null} for a message from this stack. */
    PeerReceiveBudget budget;
    /** Payload bytes of it that were queued beyond its socket's budget, charged to {@link #budget} until dequeued. */
    long excess;
    /** For a notification (a send failure, a congestion update) instead of data: what to report; rare, not pooled. */
    RdsDatagram notification;
    /** While its payload is decoded into a waiting reader's own buffer instead of {@link #payload}. */
    PostedBuffer posted;
    /** Taken by its reader with the payload already in the reader's buffer: nothing to copy. */
    boolean inPlace;
    /** The transport's object kept with {@link #payload} ({@link ReadTarget#attach}); dropped with the buffer. */
    private Object attachment;

    /**
     * A notification to return from {@code receive()} ahead of data.
     *
     * @param d the send failure or congestion update to report
     * @return a new, unpooled arrival carrying it
     */
    public static Arrival notification(RdsDatagram d) {
        Arrival a = new Arrival();
        a.notification = d;
        return a;
    }

    /**
     * The notification this arrival carries instead of data.
     *
     * @return the notification, or {@code null} for a data message
     */
    public RdsDatagram notification() {
        return notification;
    }

    /**
     * Prepares this arrival for a payload of {@code length} bytes: position 0, limit {@code length}.
     *
     * @param length the payload size in bytes
     * @return the buffer to fill, reused when large enough
     */
    public ByteBuffer prepare(int length) {
        ByteBuffer p = payload;
        if (p == null || p.capacity() < length) {
            int c = OutgoingMessage.capacityFor(length);
            // Direct from the size where a transport may read the payload straight into it (ReadTarget).
            p = length >= PostedBuffer.MIN ? ByteBuffer.allocateDirect(c) : ByteBuffer.allocate(c);
            payload = p;
            attachment = null;
        }
        p.clear().limit(length);
        return p;
    }

    /**
     * Where the decoder writes the payload: the reader's posted buffer if one was claimed for this message
     * ({@link PostedBuffer}), else the arrival's own.
     *
     * @return the buffer to fill from its position
     */
    public ByteBuffer target() {
        return posted != null ? posted.memory() : payload;
    }

    /** The arrival's own buffer, as a place to read the rest of its payload into: from its position. */
    @Override
    public ByteBuffer memory() {
        return payload;
    }

    @Override
    public int bytes() {
        return payload.remaining();                 // limit = length while it is filled
    }

    @Override
    public Object attachment() {
        return attachment;
    }

    @Override
    public void attach(Object attachment) {
        this.attachment = attachment;
    }

    /**
     * Whether the payload goes into a waiting reader's buffer ({@link #target()}) rather than the arrival's own.
     *
     * @return true while claimed for a reader's posted buffer
     */
    public boolean lent() {
        return posted != null;
    }

    /**
     * Whether the payload went straight into the reader's buffer (from where it was posted), so that nothing is to
     * be copied; cleared by {@link #recycled()}.
     *
     * @return true for a message taken from a posted buffer
     */
    public boolean inPlace() {
        return inPlace;
    }

    /** Back in its pool: the next use starts with nothing posted. */
    public void recycled() {
        next = null;
        inPlace = false;
        posted = null;
    }

    /**
     * The budget of the peer this arrival came from.
     *
     * @return the peer's budget, or {@code null} for a notification or a message from this stack
     */
    public PeerReceiveBudget budget() {
        return budget;
    }

    /**
     * A batch from {@code first} on joins a socket queue that holds {@code queued} bytes, where a socket's budget is
     * {@code socketBudget} (half its {@code SO_RCVBUF}, where its port turns congested): records on each arrival the
     * bytes of it that lie beyond the budget, which count against its peer's bound until it is dequeued.
     *
     * @param first the first arrival of the batch, linked through {@link #next()}
     * @param queued the bytes queued before the batch
     * @param socketBudget the socket's budget in bytes
     * @return the batch's bytes beyond the budget in all
     */
    public static long markExcess(Arrival first, long queued, long socketBudget) {
        long total = 0;
        long start = queued;
        for (Arrival a = first; a != null; a = a.next) {
            long end = start + a.payload.limit();
            long e = end - Math.max(start, socketBudget);
            if (e > 0) {
                a.excess = e;
                total += e;
            }
            start = end;
        }
        return total;
    }

    /**
     * The message left its socket's queue (taken by a reader, or dropped with the socket): what it held beyond its
     * socket's budget no longer counts against its peer's bound. Once per queued message.
     */
    public void dequeued() {
        long e = excess;
        if (e > 0) {
            excess = 0;
            budget.release(e);
        }
    }

    /**
     * Where the message came from.
     *
     * @return the sender's address and RDS port (port 0 for a pong)
     */
    public InetSocketAddress source() {
        return source;
    }

    /**
     * Where the message went.
     *
     * @return the RDS port the message was addressed to, 0 to 65535
     */
    public int port() {
        return port;
    }

    /**
     * When the message was queued on the receiving socket.
     *
     * @return the time as {@link System#nanoTime()}
     */
    public long arrivalNanos() {
        return arrivalNanos;
    }

    /**
     * The payload: position 0, limit = length.
     *
     * @return the arrival's own buffer (not a copy), or {@code null} before the first {@link #prepare}
     */
    public ByteBuffer payload() {
        return payload;
    }

    /**
     * The payload length.
     *
     * @return the payload size in bytes
     */
    public int length() {
        return payload.limit();
    }

    /**
     * The next arrival in a delivery batch or in the socket's receive queue.
     *
     * @return the next arrival, or {@code null} at the end
     */
    public Arrival next() {
        return next;
    }

    /**
     * Links the next arrival in a delivery batch or receive queue.
     *
     * @param n the next arrival, or {@code null} to end the chain here
     */
    public void next(Arrival n) {
        this.next = n;
    }

    /**
     * Sets where the message came from and when; the payload was filled by {@link #prepare}.
     *
     * <p>The source and budget are stored only when they differ from the last use's, and a recycled arrival keeps
     * them: a pooled
     * arrival is old once the application has run for a while, the source (one address per peer port, made once) is
     * in another region, and G1 follows each such store with a fence and, when the arrival's card is clean, a card
     * its refinement thread must scan again. Cleared on recycling and set again for every message, it kept that
     * thread busy for up to 40 % of a core in the 64-byte TCP cell of {@code ./rds4j bench} (docs/threading.md,
     * session 18).
     *
     * @param source the sender's address and RDS port
     * @param budget the budget of the peer it came from, or {@code null} for a message from a socket of this stack
     * @param port the RDS port the message was addressed to
     * @param arrivalNanos {@link System#nanoTime()} when the message was queued on the receiving socket
     * @return this arrival
     */
    public Arrival set(InetSocketAddress source, PeerReceiveBudget budget, int port, long arrivalNanos) {
        if (this.source != source) {
            this.source = source;
        }
        if (this.budget != budget) {
            this.budget = budget;
        }
        this.port = port;
        this.arrivalNanos = arrivalNanos;
        return this;
    }
}
