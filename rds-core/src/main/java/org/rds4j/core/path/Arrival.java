package org.rds4j.core.path;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import org.rds4j.RdsDatagram;
import org.rds4j.RdsMessageInfo;
import org.rds4j.core.spi.ReadTarget;

/**
 * A received message waiting on a socket: where it came from, where it went, when, and its payload. Reused: the
 * receiving socket keeps a pool of them with their buffers, the I/O thread fills one straight from the network
 * buffer, and the application's {@code receive} copies it out and gives it back. One owner at a time.
 *
 * <p>An arrival may also be a <em>run</em>: the consecutive small messages one read decoded for one socket, back to
 * back in one buffer, so that the I/O thread claims, fills and delivers one pooled object for all of them and readers
 * take them one at a time under the receive queue's lock (docs/decisions/0009-small-messages-arrive-in-runs.md). A run's messages share the
 * arrival's port, peer budget and time (one read, one connection, one socket); each has its own source and length.
 */
public final class Arrival implements ReadTarget {
    /** The largest message that joins a run: a larger one is worth its own arrival. */
    public static final int RUN_ENTRY_MAX = 1024;
    /** The most messages in one run. */
    static final int RUN_MAX = 64;
    /** What a returned item means when {@code receive} copied the message (a run's, or a peeked one) already. */
    public static final Arrival COPIED = new Arrival();

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
    /** {@link #payload} as the stack's off-heap account gave it, freed when replaced; {@code null} if not from it. */
    private org.rds4j.core.spi.OffHeapMemory.Block block;
    /** The transport's object kept with {@link #payload} ({@link ReadTarget#attach}); dropped with the buffer. */
    private Object attachment;
    /** Messages in this run, 0 for an arrival of one message (the buffer's limit is then its length). */
    private int runCount;
    /** The run's messages taken by readers; under the receive queue's lock. */
    private int runTaken;
    /** Where each message of the run ends in {@link #payload}, and who sent it; kept with the pooled arrival. */
    private int[] runEnds;
    private InetSocketAddress[] runSources;
    /** A copy of one message made under the queue's lock for the allocating {@code receive()}: not pooled. */
    private boolean detached;

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
     * Prepares this arrival for a payload of {@code length} bytes: position 0, limit {@code length}, in a buffer of at
     * least {@code room} bytes, so that the small messages behind this one in a read can join it as a run.
     *
     * @param length the payload size in bytes
     * @param room the least capacity wanted, 0 for what the length needs
     * @return the buffer to fill, reused when large enough
     */
    public ByteBuffer prepare(int length, int room) {
        return prepare(length, room, null);
    }

    /**
     * {@link #prepare(int, int)}, a new direct buffer taken from {@code offHeap} (which gives a heap buffer past its
     * bound: the payload is then decoded out of the read buffer instead of read in place).
     *
     * @param length the payload size in bytes
     * @param room the least capacity wanted, 0 for what the length needs
     * @param offHeap the stack's off-heap account, {@code null} for none
     * @return the buffer to fill, reused when large enough
     */
    public ByteBuffer prepare(int length, int room, org.rds4j.core.spi.OffHeapMemory offHeap) {
        ByteBuffer p = payload;
        if (p == null || p.capacity() < length || p.capacity() < room) {
            int c = OutgoingMessage.capacityFor(Math.max(length, room));
            // Direct from the size where a transport may read the payload straight into it (ReadTarget).
            if (block != null) {
                // The arrival is its one owner (its reader copied the last message out before recycling it), so its
                // direct memory goes back now rather than when a collection happens to run its cleaner.
                block.free();
                block = null;
            }
            if (length < PostedBuffer.MIN) {
                p = ByteBuffer.allocate(c);
            } else if (offHeap != null) {
                block = offHeap.allocate(c);
                p = block.buffer;
            } else {
                p = ByteBuffer.allocateDirect(c);
            }
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

    /** Back in its pool: the next use starts with nothing posted, as one message. */
    public void recycled() {
        next = null;
        inPlace = false;
        posted = null;
        runCount = 0;
        runTaken = 0;
    }

    // ------------------------------------------------------------------------------------------------ runs

    /**
     * I/O thread, while this arrival is the last one a read gathered for its socket: room for one more message of
     * {@code length} bytes behind the ones it holds. The decoder fills the returned buffer from its position to its
     * limit; then {@link #runFilled} or {@link #runSlotDropped}.
     *
     * @param length the next message's payload size, at most {@link #RUN_ENTRY_MAX}
     * @return the buffer positioned at the free slot, or {@code null} if the run is full or this arrival cannot be one
     */
    ByteBuffer runSlot(int length) {
        ByteBuffer p = payload;
        int end = p.limit();
        if (posted != null || runCount == RUN_MAX || end + length > p.capacity()) {
            return null;
        }
        if (runCount == 0) {
            if (runEnds == null) {
                runEnds = new int[RUN_MAX];
                runSources = new InetSocketAddress[RUN_MAX];
            }
            runEnds[0] = end;
            storeSource(0, source);
            runCount = 1;
        }
        p.limit(end + length).position(end);
        return p;
    }

    /**
     * Whether {@link #runSlot} failed for want of room (a larger buffer would have taken the message).
     *
     * @return true if the run is not full by count
     */
    boolean runOutOfRoom() {
        return posted == null && runCount < RUN_MAX;
    }

    /** The slot is filled with a message from {@code from}: it joins the run. */
    void runFilled(InetSocketAddress from) {
        int i = runCount;
        runEnds[i] = payload.position();
        storeSource(i, from);
        runCount = i + 1;
        payload.position(0);
    }

    /** The slot will not be filled (a duplicate, or the read ended inside it): the run ends where it did. */
    void runSlotDropped() {
        payload.limit(runEnds[runCount - 1]).position(0);
    }

    /** Where the run's last whole message ends: the start of a slot handed out by {@link #runSlot}. */
    int runEnd() {
        return runEnds[runCount - 1];
    }

    private void storeSource(int i, InetSocketAddress from) {
        if (runSources[i] != from) {
            runSources[i] = from;                   // only when it changes: see set() for why
        }
    }

    /**
     * Whether this arrival holds a run of messages rather than one.
     *
     * @return true for a run
     */
    public boolean isRun() {
        return runCount > 0;
    }

    /**
     * Under the receive queue's lock: the length of the next message to take, the run's next or the arrival's one.
     *
     * @return its payload size in bytes
     */
    public int nextLength() {
        if (runCount == 0) {
            return payload.limit();
        }
        int i = runTaken;
        return runEnds[i] - (i == 0 ? 0 : runEnds[i - 1]);
    }

    /**
     * Under the receive queue's lock: copies the next message out (the run's next, or this arrival's one), into
     * {@code dst} from its position (as much as fits; the position moves past it) with {@code info} describing it,
     * or, without {@code info}, into an arrival of its own for the allocating {@code receive()}. Does not take it:
     * see {@link #runStep}. Used for a run's messages, which other readers may take meanwhile, and for a peek, whose
     * arrival another reader may take and give back while a copy outside the lock still reads it.
     *
     * @param dst the caller's buffer, or {@code null} with {@code info}
     * @param info what the caller learns about the message, or {@code null} for a detached copy
     * @return {@link #COPIED}, or the detached copy
     */
    public Arrival copyNext(ByteBuffer dst, RdsMessageInfo info) {
        int start = 0;
        int len = payload.limit();
        InetSocketAddress from = source;
        if (runCount > 0) {
            int i = runTaken;
            start = i == 0 ? 0 : runEnds[i - 1];
            len = runEnds[i] - start;
            from = runSources[i];
        }
        if (info == null) {
            Arrival a = new Arrival();
            a.payload = ByteBuffer.allocate(len).put(0, payload, start, len);
            a.set(from, null, port, arrivalNanos);
            a.detached = true;
            return a;
        }
        int n = Math.min(dst.remaining(), len);
        dst.put(dst.position(), payload, start, n);
        dst.position(dst.position() + n);
        info.setData(from, port, len, n < len, arrivalNanos);
        return COPIED;
    }

    /**
     * Under the receive queue's lock: the run's next message is taken.
     *
     * @return true if it was the run's last, so that the run leaves the queue
     */
    public boolean runStep() {
        return ++runTaken == runCount;
    }

    /**
     * Whether this is a copy of one message made under the queue's lock for the allocating {@code receive()}: its
     * payload is the caller's to keep, and it goes back to no pool.
     *
     * @return true for a detached copy
     */
    public boolean detached() {
        return detached;
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
     * The payload length; for a run, its messages' bytes together.
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
     * thread busy for up to 40 % of a core in the 64-byte TCP cell of {@code ./rds4j bench} (docs/decisions/
     * 0017-pooled-objects-keep-their-references.md).
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
