package org.rds4j.transport.tcp;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelOutboundBuffer;
import io.netty.channel.ChannelPromise;
import io.netty.channel.DefaultChannelPromise;
import io.netty.channel.socket.nio.NioSocketChannel;
import java.nio.ByteBuffer;
import org.rds4j.core.spi.FrameSink;
import org.rds4j.core.spi.PayloadLoan;

/**
 * Packs the frames of one connection into 32 KiB pooled direct buffers and writes each full buffer as one Netty
 * message; {@link #finish()} writes the partial last one and flushes once per transmit call.
 *
 * <p>Why copy: a socket write needs direct memory, so the JDK copies any heap buffer into a temporary direct one
 * anyway; copying into our batch instead costs nothing extra and lets hundreds of small messages leave in one
 * {@code write(2)} (one write-and-flush per 64-byte message measured ~3% of the packed throughput). The copy uses
 * absolute positions on both sides, so the caller's buffers are never touched, not even for a moment (a payload may
 * be shared by connections on other I/O threads), and nothing is allocated per message or per batch: batches come
 * from the I/O thread's {@link BufferRecycler} (written batches used again, else the pooled allocator) and are written
 * with the channel's void promise (a failed write fires {@code exceptionCaught}, which fails the connection: it is
 * read to its end, then closed, {@link TcpConnection}).
 *
 * <p>Except large payloads the core lends ({@link #write(ByteBuffer, ByteBuffer, PayloadLoan)}): from 32 KiB a
 * message's payload is already in direct memory, and copying it into batches took 12 % of the sending I/O thread's
 * CPU at 1 MiB, so it is written from where it lies, in the same gathering write as the batch holding its header.
 *
 * <p>A copied frame may span batches; a 1 MiB payload fills 32 of them. When the pass ends, the flush has written
 * what the socket took: if Netty's outbound buffer is empty, everything up to the stream offset has left, and that
 * is reported at once. Otherwise one empty marker write follows the data (Netty completes writes in order), and its
 * completion reports the offset; at most one marker is outstanding. The marker's promise is one object used for
 * every marker ({@link MarkerPromise}): a new promise per marker was rds4j's own garbage each time a backed-up
 * connection drained, about 40 bytes, a third of what such a drain allocated with Netty's epoll (which allocates its
 * interest sets for the write readiness it adds and removes).
 *
 * <p>Used only on the connection's event loop.
 */
final class BatchingFrameSink implements FrameSink {
    /**
     * The size of one batch: large enough to amortise a system call, and no larger than what Netty's pooled
     * allocator keeps in its per-thread cache ({@code io.netty.allocator.maxCachedBufferCapacity}, 32 KiB by
     * default). A pass allocates one batch even for a single small frame, and a 64 KiB batch missed that cache every
     * time: the allocation went to the arena, under its lock (about a tenth of an I/O thread's time at 64-byte
     * messages). Under backlog the batches of a pass still leave together: Netty writes the buffers queued on a
     * channel with one gathering {@code writev(2)}.
     */
    static final int BATCH_SIZE = 32 * 1024;

    /** What becomes of each written batch. */
    interface Outcome {
        /** The batch ending at {@code endOffset} was handed to the operating system. */
        void batchTransmitted(long endOffset);

        /** A batch could not be written: the connection is broken. */
        void batchFailed(Throwable cause);
    }

    private final Channel channel;
    private final Outcome outcome;
    private final int batchSize;
    private final BufferRecycler recycler;
    private final boolean borrowing;
    /** Whether the batch's bytes ahead of a lent payload leave as a slice of it (the constructor says when). */
    private final boolean slicing;
    private ByteBuf batch;
    private ByteBuffer view;        // the batch's memory, from viewBase; null if it has no single NIO view
    private int viewBase;
    private int fill;               // bytes in the batch
    private int written;            // bytes of the batch already written as a slice, ahead of a borrowed payload
    private long offset;
    private boolean unflushed;
    private long reported;
    private boolean markerPending;
    private long markerOffset;
    private final MarkerPromise markerPromise;

    /** A sink whose batches come from the {@link BufferRecycler} of the thread that fills them, its event loop. */
    BatchingFrameSink(Channel channel, Outcome outcome, boolean borrowing) {
        this(channel, outcome, null, borrowing, !(channel instanceof NioSocketChannel));
    }

    /** A sink whose batches come from {@code recycler} and whose writes ahead of lent payloads are slices. */
    BatchingFrameSink(Channel channel, Outcome outcome, BufferRecycler recycler, boolean borrowing) {
        this(channel, outcome, recycler, borrowing, true);
    }

    /**
     * @param recycler where batches come from, or {@code null} for the filling thread's own
     * @param borrowing whether lent payloads may be written as they lie: not under TLS, whose handler takes only
     *                  buffers (and encrypts into its own anyway)
     * @param slicing   whether the batch's bytes ahead of a lent payload are written as a slice of it, so that the
     *                  next frame continues the same batch: where the channel writes buffers by their memory address
     *                  (epoll). A NIO channel writes through a {@code ByteBuffer} view of each buffer, which a batch
     *                  keeps from one use to the next but a slice makes anew for every write (a 1 MiB message cost
     *                  about 130 bytes of garbage that way); there the batch itself is written and the next frame
     *                  starts another.
     */
    BatchingFrameSink(Channel channel, Outcome outcome, BufferRecycler recycler, boolean borrowing,
            boolean slicing) {
        this.channel = channel;
        this.outcome = outcome;
        this.batchSize = BATCH_SIZE;
        this.recycler = recycler;
        this.borrowing = borrowing;
        this.slicing = slicing;
        this.markerPromise = new MarkerPromise(channel, this);
    }

    @Override
    public boolean isWritable() {
        return channel.isWritable();
    }

    /** Nothing flushed earlier is still in Netty's outbound buffer (this pass's batch is not there yet). */
    @Override
    public boolean isDrained() {
        ChannelOutboundBuffer out = channel.unsafe().outboundBuffer();
        return out != null && out.totalPendingWriteBytes() == 0;
    }

    @Override
    public void write(ByteBuffer header, ByteBuffer payload) {
        copy(header);
        copy(payload);
    }

    /**
     * Writes a lent payload from where it lies: the header goes into the batch, the batch's bytes so far are written
     * as a slice of it, then the payload as a {@link LentPayloadBuf}, so the frame's bytes leave in order and in the
     * same gathering write, and the next frame continues the same batch (without {@code slicing}, the batch itself
     * is written and the next frame starts a new one). The core lends only large payloads
     * ({@code MessageBuffer.DIRECT_MIN}), for which one more entry in the write is far cheaper than the copy it saves.
     * Otherwise, or if the payload is out on loan already, the payload is copied.
     */
    @Override
    public void write(ByteBuffer header, ByteBuffer payload, PayloadLoan loan) {
        if (!borrowing || loan == null || !payload.hasRemaining() || !loan.borrow()) {
            write(header, payload);
            return;
        }
        writeStash();
        copy(header);
        if (slicing) {
            writeFilled();
        } else if (batch != null) {
            writeBatch();
        }
        int n = payload.remaining();
        unflushed = true;
        offset += n;
        channel.write(LentPayloadBuf.lend(loan, payload.position(), n), channel.voidPromise());
    }

    /**
     * Claims room in the batch being filled, short of its end (a full batch is written at once, and the claimed bytes
     * are not there yet); none if the batch has no single NIO view. The view is returned at the region's start: the
     * copies into it use absolute indexes, so its position is free for this.
     */
    @Override
    public ByteBuffer claim(int length) {
        if (batch == null) {
            startBatch();
        }
        if (view == null || length >= batchSize - fill) {
            return null;
        }
        int at = viewBase + fill;
        fill += length;
        offset += length;
        return view.position(at);
    }

    @Override
    public long streamOffset() {
        return offset;
    }

    private void copy(ByteBuffer src) {
        int pos = src.position();
        int remaining = src.limit() - pos;
        while (remaining > 0) {
            if (batch == null) {
                startBatch();
            }
            int n = Math.min(remaining, batchSize - fill);
            if (view != null) {
                view.put(viewBase + fill, src, pos, n);     // absolute bulk copy (Java 16+): no position moves
            } else {
                put(batch, fill, src, pos, n);
            }
            fill += n;
            pos += n;
            remaining -= n;
            offset += n;
            if (fill == batchSize) {
                writeBatch();
            }
        }
    }

    private void startBatch() {
        writeStash();
        ByteBuf b = (recycler != null ? recycler : BufferRecycler.writeBatches()).take(channel.alloc());
        batch = b;
        fill = 0;
        written = 0;
        // One view of the batch's memory per batch, so that copying a message makes no ByteBuf call at all (each
        // is cheap, but under leak detection each is recorded).
        if (b.nioBufferCount() == 1) {
            view = b.internalNioBuffer(0, batchSize);
            viewBase = view.position();
        } else {
            view = null;
        }
    }

    /** Copies {@code n} bytes of {@code src} from {@code srcPos} into {@code dst} at {@code index}; no position moves. */
    static void put(ByteBuf dst, int index, ByteBuffer src, int srcPos, int n) {
        if (src.hasArray()) {
            dst.setBytes(index, src.array(), src.arrayOffset() + srcPos, n);
        } else {
            for (int i = 0; i < n; i++) {
                dst.setByte(index + i, src.get(srcPos + i));
            }
        }
    }

    private void writeBatch() {
        ByteBuf b = batch;
        unflushed = true;
        // On a closed channel the write fails at once and Netty releases the buffer; otherwise Netty releases it
        // once written or failed. Either way the buffer is no longer ours.
        if (written == 0) {
            b.writerIndex(fill);
            channel.write(b, channel.voidPromise());
        } else {
            writeFilled();
            b.release();                   // the slices written hold the batch until they are written
        }
        batch = null;
        view = null;
        written = 0;
    }

    /**
     * Writes what the batch holds and was not written yet, as a slice of it (a pooled derived buffer: no
     * allocation where the channel writes by address), and keeps filling the batch after it.
     */
    private void writeFilled() {
        if (batch != null && fill > written) {
            channel.write(batch.retainedSlice(written, fill - written), channel.voidPromise());
            written = fill;
            unflushed = true;
        }
    }

    // ---- caller I/O (busy-poll, decision 0031) ----
    //
    // An application thread holding the core's connection may write the channel itself (CallerFrameSink) while Netty
    // holds nothing unwritten. What its socket did not take is kept here and written by the next pass on the event
    // loop, ahead of anything else: the stash. Stash operations lock this sink: a caller may hand bytes over while
    // the loop discards the sink at the close.

    /** Bytes a caller's write left, not yet handed to Netty; null if none. */
    private volatile ByteBuf stash;
    private boolean discarded;

    /** Whether a caller's bytes wait here: callers write nothing more until the loop has handed them to Netty. */
    boolean holdsCallerBytes() {
        return stash != null;
    }

    /** A caller's pass wrote everything up to {@code endOffset}; holding the connection. */
    void callerWrote(long endOffset) {
        offset = endOffset;
    }

    /** A caller's write left these bytes, which end the stream at {@code endOffset}; holding the connection. */
    synchronized void callerLeft(ByteBuffer rest, long endOffset) {
        offset = endOffset;
        if (discarded) {
            return;                                 // closed: the core hears of it and sends again after reconnecting
        }
        ByteBuf old = stash;
        ByteBuf b = channel.alloc().directBuffer(rest.remaining() + (old == null ? 0 : old.readableBytes()));
        if (old != null) {
            b.writeBytes(old);
            old.release();
        }
        b.writeBytes(rest);
        stash = b;
    }

    /** Hands a caller's leftover bytes to Netty, ahead of this pass's frames; in a pass, holding the connection. */
    private void writeStash() {
        if (stash == null) {
            return;
        }
        ByteBuf s;
        synchronized (this) {
            s = stash;
            if (s == null) {
                return;
            }
            channel.write(s, channel.voidPromise());   // counted in Netty's pending bytes before the stash clears
            stash = null;
        }
        unflushed = true;
    }

    /** The end of a pass under caller I/O, holding the connection: the stash and the batch go to Netty now. */
    @Override
    public void endPass() {
        writeStash();
        finish();
    }

    /** Ends a transmit call: writes the partial batch, if any, and flushes once. */
    void finish() {
        if (batch != null) {
            writeBatch();
        }
        if (unflushed) {
            unflushed = false;
            channel.flush();
        }
        reportTransmitted();
    }

    /** Reports the offset if everything written has left; otherwise makes sure a marker will report it. */
    private void reportTransmitted() {
        if (offset == reported || markerPending || !channel.isActive()) {
            return;
        }
        ChannelOutboundBuffer out = channel.unsafe().outboundBuffer();
        if (out == null || out.totalPendingWriteBytes() == 0) {
            reported = offset;
            outcome.batchTransmitted(offset);
            return;
        }
        markerPending = true;
        markerOffset = offset;
        channel.writeAndFlush(Unpooled.EMPTY_BUFFER, markerPromise);
    }

    /** The marker was written ({@code cause} null) or failed. On the event loop, or in the failed write's call. */
    private void markerDone(Throwable cause) {
        markerPending = false;
        if (cause != null) {
            outcome.batchFailed(cause);
            return;
        }
        if (markerOffset > reported) {
            reported = markerOffset;
            outcome.batchTransmitted(markerOffset);
        }
        reportTransmitted();                      // more may have been written meanwhile
    }

    /** Releases a batch that will never be written (the connection closed mid-call). */
    void discard() {
        synchronized (this) {
            discarded = true;
            if (stash != null) {
                stash.release();
                stash = null;
            }
        }
        ByteBuf b = batch;
        batch = null;
        view = null;
        written = 0;
        if (b != null) {
            b.release();
        }
    }

    /**
     * The promise of every marker write, never done: Netty completes a write's promise through {@code trySuccess}
     * or {@code tryFailure} (its outbound buffer, once the write left or failed), and this one hands that to the sink
     * and stays as it was, so the next marker can carry it again (Netty refuses a promise that is done). Nothing else
     * sees it: no listener is added and nobody waits on it. At most one marker is outstanding, so one completion
     * comes per write.
     */
    static final class MarkerPromise extends DefaultChannelPromise {
        private final BatchingFrameSink sink;

        MarkerPromise(Channel channel, BatchingFrameSink sink) {
            super(channel);
            this.sink = sink;
        }

        @Override
        public boolean trySuccess(Void result) {
            sink.markerDone(null);
            return true;
        }

        @Override
        public ChannelPromise setSuccess(Void result) {
            trySuccess(result);
            return this;
        }

        @Override
        public boolean tryFailure(Throwable cause) {
            sink.markerDone(cause);
            return true;
        }

        @Override
        public ChannelPromise setFailure(Throwable cause) {
            tryFailure(cause);
            return this;
        }
    }
}
