package org.rds4j.transport.loopback;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import org.rds4j.core.spi.ConnectionHandler;
import org.rds4j.core.spi.FrameSink;
import org.rds4j.core.spi.TransportConnection;
import org.rds4j.core.util.BoundedPool;
import org.rds4j.core.util.CoalescingTask;

/**
 * One end of an in-memory connection. What this end writes goes into pooled 64 KiB chunks, and each transmit pass
 * hands the other end a {@link Segment}: the region of the chunk it filled (at most 64 KiB, as TCP segments a
 * stream), with no copy; a chunk is shared by the passes that fill it and comes back to this end's pool when the
 * other end has read its last segment. The segments queue at the other end, whose stack thread hands them to its
 * handler through the chunk's own view ({@link Chunk}); once consumed, this end hears
 * {@link ConnectionHandler#onTransmitted} for them. Bytes in flight above the high-water mark pause the writer until
 * the reader catches up. Steady traffic allocates nothing: chunks (with their views), segments and tasks are reused.
 *
 * <p>Threads: handler calls of this end run on this end's stack thread; the queue between the two ends is guarded by
 * the receiving end's monitor, and the pools are safe for both threads.
 */
final class LoopbackEndpoint implements TransportConnection, FrameSink {
    /** Chunks and segments kept per writing end: the high-water mark's worth and some. */
    private static final int POOL = 64;
    /**
     * Chunks a writing end makes before it reuses one (2 MiB of stream), so that a chunk it writes into again was
     * read by the other end's thread long enough ago to have left that core's private caches. Reused sooner, each
     * line the writer stores to still sits in the reader's cache and must be taken from it first: with the few
     * chunks a stream keeps in flight, pinned 8 KiB messages cost 7.3 CPU seconds per million where a ring of 32
     * costs 2.9 (docs/decisions/0013-loopback-chunk-ring.md). A chunk is made only when a fast stream reaches it
     * ({@link #FAST_CHUNK_NANOS}) and its reader's thread has not moved that much memory by other streams meanwhile
     * ({@link #grows}), so a connection that moves little keeps little. Ends that share a thread keep the ring too:
     * without it, 64 KiB streams between them fell to a third in three runs of nine
     * (docs/decisions/0045-loopback-ring-on-a-shared-thread.md).
     */
    static final int RING = 32;
    /**
     * A stream that fills a chunk within this long of the one before (64 MB/s or more) grows the ring. A slower one,
     * such as the acknowledgements flowing back against a stream of large messages, reuses what it has: a chunk it
     * wrote a millisecond ago or more has been pushed out of the reading core's caches by then if that core is busy,
     * and if it is not, a reused line costs little at that rate. Growing it anyway made the acknowledgement side of a
     * 1 MiB cell allocate a new chunk every 1,400 messages until its ring was full.
     */
    static final long FAST_CHUNK_NANOS = 1_000_000L;
    /**
     * The ring is sized over a stream's first this many chunks (8 MiB) and never grows after them: a stream whose
     * speed hovers about {@link #FAST_CHUNK_NANOS} (6,000-byte messages that each congest the receiver) otherwise
     * made its chunks whenever it first ran fast, which could be long after it had settled, and a steady stream then
     * allocated 2 to 6 MB at once ({@code LoopbackAllocationTest}, two runs in six).
     */
    static final int RING_WINDOW = 4 * RING;

    private final LoopbackInstance owner;
    private final InetSocketAddress local;
    private final InetSocketAddress remote;
    /** The transmit pass, queued on our thread at most once at a time; {@link #deliverPending} may take it early. */
    private final CoalescingTask transmitTask = new CoalescingTask(this::transmit);
    /** The hand-over of queued segments to our handler, queued on our thread at most once at a time. */
    private final CoalescingTask deliverTask = new CoalescingTask(this::deliverPending);
    private final CloseOnce closed = new CloseOnce();
    private final Runnable consumedTask = this::reportConsumed;
    private final BoundedPool<Chunk> chunks = new BoundedPool<>(POOL, this::chunkForEmptyPool);
    private final BoundedPool<Segment> segments = new BoundedPool<>(4 * POOL, Segment::new);
    private LoopbackEndpoint peer;
    private volatile ConnectionHandler handler;

    // Written by the peer's thread, read by ours: guarded by this.
    private final ArrayDeque<Segment> inbound = new ArrayDeque<>();
    private boolean peerFinished;

    // Our writing state, on our thread.
    private Chunk staging = new Chunk();
    /** Chunks this end has made, counting the two it starts with, up to {@link #RING}; our thread. */
    private int chunksMade = 2;
    /** Chunks made because the pool had none back, since this end was made; our thread. */
    private int poolMisses;
    /** Chunks this end has moved to, up to {@link #RING_WINDOW}; our thread. */
    private int chunkSwitches;
    /** When this end last moved to a new chunk ({@link System#nanoTime}); our thread. */
    private long lastChunkNanos = System.nanoTime();
    /** What the reader's thread had moved ({@link LoopbackInstance#moved()}) when this end last moved on; ours. */
    private long readerMovedAtLastChunk;
    /** Where the part of the staging chunk not yet handed over starts. */
    private int stagedFrom;
    private long written;
    /** How far the peer has consumed our stream, and whether our writer waits for room. */
    private final WriteWindow window = new WriteWindow();
    /** The last offset reported to our handler as transmitted; our thread. */
    private long reportedConsumed;
    /** The core stopped reading ({@link #setReadable}): segments stay queued and the writer's high-water mark holds. */
    private volatile boolean readPaused;

    /**
     * An end with its staging chunk and a spare in its pool. A stream whose reader keeps up moves between those two
     * and never finds its pool empty; with only the staging chunk, the first time a stream filled it the pool was
     * empty (the chunk's last segment was still unread), and a new chunk was made then. For a stream that moves
     * little, such as the congestion maps every path of a connection carries, that moment came at any time, and on
     * all eight paths at once: 460 KB in the measured phase of a 1 MiB benchmark cell, 75 bytes per message
     * (docs/decisions/0038-loopback-end-starts-with-a-spare-chunk.md).
     */
    LoopbackEndpoint(LoopbackInstance owner, InetSocketAddress local, InetSocketAddress remote) {
        this.owner = owner;
        this.local = local;
        this.remote = remote;
        chunks.offer(new Chunk());
    }

    void pair(LoopbackEndpoint other) {
        this.peer = other;
        this.readerMovedAtLastChunk = other.owner.moved();
    }

    /**
     * Sets the handler, on the owner's thread. If the connection was reset before it had one (the other end aborted
     * while the acceptor was still deciding), the handler hears of it now: else its path would stay up on a dead
     * connection.
     */
    void handler(ConnectionHandler h) {
        this.handler = h;
        if (closed.isClosed()) {
            reportClosed();
        }
    }

    /** Tells the handler of the close, once, if it has one yet. */
    private void reportClosed() {
        ConnectionHandler h = handler;
        if (h != null && closed.claimReport()) {
            h.onClosed(closed.cause());
        }
    }

    @Override
    public InetSocketAddress localAddress() {
        return local;
    }

    @Override
    public InetSocketAddress remoteAddress() {
        return remote;
    }

    // ------------------------------------------------------------------------------------------------ writing

    @Override
    public void requestTransmit() {
        if (!closed.isClosed() && transmitTask.request()) {
            owner.execute(transmitTask);
        }
    }

    /**
     * A transmit pass, run by {@link #transmitTask} if the request still stands ({@link #deliverPending} may have
     * taken it already). Each request raises the flag before it queues the task, so a pass always follows the latest
     * request.
     */
    private void transmit() {
        ConnectionHandler h = handler;
        if (closed.isClosed() || h == null) {
            return;
        }
        h.transmit(this);
        flushChunk();
    }

    @Override
    public boolean isWritable() {
        return window.hasRoom(written, owner.highWaterMark());
    }

    @Override
    public void write(ByteBuffer header, ByteBuffer payload) {
        copy(header);
        copy(payload);
    }

    /**
     * Claims room in the staging chunk, short of its end: a claim never fills the chunk, since a full chunk is handed
     * to the peer at once and the claimed bytes are not written yet. The chunk's {@code claims} view is returned at
     * the region's start.
     */
    @Override
    public ByteBuffer claim(int length) {
        ByteBuffer b = staging.bytes;
        int at = b.position();
        if (length >= b.limit() - at) {
            return null;
        }
        b.position(at + length);
        written += length;
        return staging.claims.position(at);
    }

    private void copy(ByteBuffer src) {
        int pos = src.position();
        int end = src.limit();
        while (pos < end) {
            ByteBuffer b = staging.bytes;
            int n = Math.min(end - pos, b.remaining());
            b.put(b.position(), src, pos, n);
            b.position(b.position() + n);
            pos += n;
            written += n;
            if (!b.hasRemaining()) {
                flushChunk();
            }
        }
    }

    /** Hands what this pass staged to the peer, as a segment of the chunk; moves to a new chunk when it is full. */
    private void flushChunk() {
        int end = staging.bytes.position();
        if (end == stagedFrom) {
            return;
        }
        owner.moved(end - stagedFrom);
        Segment seg = segments.take();
        seg.chunk = staging;
        seg.from = stagedFrom;
        seg.to = end;
        seg.endOffset = written;
        seg.lastOfChunk = !staging.bytes.hasRemaining();
        if (seg.lastOfChunk) {
            staging = nextChunk();
            staging.bytes.clear();
            stagedFrom = 0;
        } else {
            stagedFrom = end;
        }
        if (peer.arrive(seg)) {
            segments.offer(seg);              // its bytes went with the segment before it
        }
    }

    /**
     * A new chunk while a fast stream, in its first {@link #RING_WINDOW} chunks, has not made its ring yet ({@link
     * #grows}), else the one the reader gave back longest ago (the pool is first in, first out; it makes a chunk only
     * when none is back).
     */
    private Chunk nextChunk() {
        if (chunkSwitches == RING_WINDOW) {
            return chunks.take();
        }
        chunkSwitches++;
        long now = System.nanoTime();
        long readerMoved = peer.owner.moved();
        boolean grow = grows(now - lastChunkNanos, readerMoved - readerMovedAtLastChunk, chunksMade);
        lastChunkNanos = now;
        readerMovedAtLastChunk = readerMoved;
        if (grow) {
            chunksMade++;
            return new Chunk();
        }
        return chunks.take();
    }

    /**
     * Whether a writer that has made {@code made} chunks (at most {@link #RING}) makes another as it moves on from one
     * it filled in {@code fillNanos}, while the reader's thread moved {@code readerMoved} bytes of stream (this one's
     * and any other's, both ways). A chunk taken from the pool comes back to be written about {@code made} chunks after
     * the reader read it, and the reader's thread has moved about {@code made * readerMoved} bytes by then: once that
     * is {@link #RING} chunks' worth, the lines have left its core's caches whatever the ring's size, and a bigger ring
     * would only cost memory. That is the case of a stream that runs fast beside a much faster one the same thread
     * reads or writes: the congestion maps and acknowledgements a receiver of 64 KiB messages sends back, whose reader
     * is the thread writing the messages. Their ring grew on the maps of a port that turned congested and clear about
     * once a message (eight paths, 8 KiB a map), at whatever moment that began, and once in a measured phase: 32 chunks
     * on each path, 16 MB (docs/decisions/0041-loopback-ring-by-reader-traffic.md).
     *
     * @param fillNanos how long the chunk took to fill
     * @param readerMoved bytes the reader's thread moved meanwhile
     * @param made chunks this writer has made so far
     * @return whether to make a new chunk rather than reuse one
     */
    static boolean grows(long fillNanos, long readerMoved, int made) {
        return made < RING && fillNanos < FAST_CHUNK_NANOS && readerMoved * made < (long) RING * Chunk.SIZE;
    }

    /** Makes a chunk when none is back: the reader is more than a chunk behind; our thread. */
    private Chunk chunkForEmptyPool() {
        poolMisses++;
        return new Chunk();
    }

    /** Chunks this end made because its pool was empty (for tests; read it after the writer's thread is done). */
    int poolMisses() {
        return poolMisses;
    }

    /** The reader is done with a segment of ours: recycle it, and its chunk if it was the chunk's last. */
    private void segmentRead(Segment seg) {
        if (seg.lastOfChunk) {
            chunks.offer(seg.chunk);
        }
        seg.chunk = null;
        segments.offer(seg);
    }

    @Override
    public long streamOffset() {
        return written;
    }

    // ------------------------------------------------------------------------------------------------ reading

    /**
     * Called on the peer's thread: a segment of the peer's stream arrived here. If the segment before it is still
     * queued and ends where this one starts in the same chunk, it grows to take this one's bytes instead, as TCP
     * coalesces what a receiver has not read yet: a reader that falls behind a writer of small passes then holds a
     * segment per chunk, not one per pass, and the writer's segment pool covers it.
     *
     * @return whether {@code seg} was merged into the one before it: the caller recycles it
     */
    private boolean arrive(Segment seg) {
        synchronized (this) {
            if (closed.isClosed()) {
                return false;
            }
            Segment last = inbound.peekLast();
            if (last != null && last.chunk == seg.chunk && last.to == seg.from) {
                last.to = seg.to;
                last.endOffset = seg.endOffset;
                last.lastOfChunk = seg.lastOfChunk;
                return true;                  // the reader already has a delivery pending for the one before
            }
            inbound.addLast(seg);
        }
        scheduleDelivery();
        return false;
    }

    private void scheduleDelivery() {
        if (handler != null && deliverTask.request()) {
            owner.execute(deliverTask);
        }
    }

    @Override
    public void setReadable(boolean readable) {
        readPaused = !readable;
        if (readable) {
            scheduleDelivery();
        }
    }

    /** On our thread, once the handler is set: delivers what came before it, and whatever is asked for now. */
    void deliverNow() {
        deliverTask.takeRequest();                       // this pass covers a delivery asked for before it
        deliverPending();
    }

    /**
     * On our thread: hands the queued segments to our handler, then tells the peer how far we got. A transmit asked for
     * while a segment was decoded runs before the next waiting segment, not after all of them: the acknowledgement the
     * core queues after each read then leaves while the rest is decoded. When it left only after every waiting segment,
     * a receiver behind a fast sender acknowledged once per 2,353 64-byte messages, more than a default send budget
     * holds (1,664), so the sender stopped at every acknowledgement
     * (docs/decisions/0014-loopback-acknowledges-between-segments.md). With nothing more waiting the transmit stays a
     * task, as before: a reply the application is about to send then carries the acknowledgement (with an immediate
     * pass after every segment, the 8 KiB round trip came out longer). The segments of one connection are still decoded
     * in one turn, so that a congestion map split over two of them does not wait while other paths decode theirs.
     */
    private void deliverPending() {
        ConnectionHandler h = handler;
        if (h == null) {
            return;
        }
        long end = -1;
        boolean finished = false;
        while (!readPaused) {
            Segment seg;
            synchronized (this) {
                seg = inbound.pollFirst();
                finished = peerFinished && inbound.isEmpty();
            }
            if (seg == null || closed.isClosed()) {
                break;
            }
            end = seg.endOffset;
            ByteBuffer view = seg.chunk.view;        // made with the chunk: nothing allocated here
            view.limit(seg.to).position(seg.from);
            h.onBytes(view);
            owner.moved(seg.to - seg.from);
            peer.segmentRead(seg);
            if (moreWaiting() && transmitTask.takeRequest()) {
                transmit();                          // before the next segment, not after all of them
            }
        }
        if (closed.isClosed()) {
            return;
        }
        if (end >= 0) {
            peer.consumed(end);
        }
        if (finished) {
            closeLocally(null);
        }
    }

    private synchronized boolean moreWaiting() {
        return !inbound.isEmpty();
    }

    /** Called on our reader's thread: the peer consumed our stream up to {@code offset}. */
    private void consumed(long offset) {
        boolean wake = window.consumed(offset, written, owner.highWaterMark());
        owner.execute(consumedTask);
        if (wake) {
            requestTransmit();
        }
    }

    /** On our thread: report how far the peer has read (the latest offset; several reports may merge into one). */
    private void reportConsumed() {
        long offset = window.consumed();
        ConnectionHandler h = handler;
        if (h != null && !closed.isClosed() && offset > reportedConsumed) {
            reportedConsumed = offset;
            h.onTransmitted(offset);
        }
    }

    // ------------------------------------------------------------------------------------------------ closing

    /** Orderly close: the peer reads what is in flight, then sees the close. */
    @Override
    public void close() {
        owner.execute(() -> {
            flushChunk();
            LoopbackEndpoint p = peer;
            synchronized (p) {
                p.peerFinished = true;
            }
            p.scheduleDelivery();
            closeLocally(null);
        });
    }

    /** Reset: both ends close at once, bytes in flight are lost. */
    @Override
    public void abort() {
        closeLocally(null);
        peer.closeLocally(new IOException("connection reset by peer (loopback)"));
    }

    private void closeLocally(Throwable cause) {
        if (!closed.close(cause)) {
            return;                              // closed already: the first close's cause is the one reported
        }
        synchronized (this) {
            inbound.clear();
        }
        owner.removed(this);
        owner.execute(this::reportClosed);
    }

    @Override
    public String toString() {
        return "LoopbackEndpoint[" + local + " -> " + remote + "]";
    }
}
