package org.rds4j.transport.loopback;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.concurrent.atomic.AtomicBoolean;
import org.rds4j.core.spi.ConnectionHandler;
import org.rds4j.core.spi.FrameSink;
import org.rds4j.core.spi.TransportConnection;

/**
 * One end of an in-memory connection. What this end writes is gathered in a reused 64 KiB staging buffer and handed
 * to the other end in chunks of at most 64 KiB (as TCP segments a stream), each a right-sized copy, so a transmit
 * pass of one small message costs a small allocation rather than a whole chunk. The chunks queue at the other end,
 * whose stack thread hands them to its handler; once consumed, this end hears
 * {@link ConnectionHandler#onTransmitted} for them. Bytes in flight above the high-water mark pause the writer until
 * the reader catches up.
 *
 * <p>Threads: handler calls of this end run on this end's stack thread; the queue between the two ends is guarded by
 * the receiving end's monitor.
 */
final class LoopbackEndpoint implements TransportConnection, FrameSink {
    private static final int CHUNK = 64 * 1024;

    private final LoopbackInstance owner;
    private final InetSocketAddress local;
    private final InetSocketAddress remote;
    private final AtomicBoolean transmitPending = new AtomicBoolean();
    private final AtomicBoolean deliveryPending = new AtomicBoolean();
    private final AtomicBoolean closed = new AtomicBoolean();
    private final Runnable transmitTask = this::runTransmit;
    private final Runnable deliverTask = this::deliverPending;
    private LoopbackEndpoint peer;
    private volatile ConnectionHandler handler;

    // Written by the peer's thread, read by ours: guarded by this.
    private final ArrayDeque<ByteBuffer> inbound = new ArrayDeque<>();
    private long inboundEnd;
    private boolean peerFinished;

    // Our writing state, on our thread.
    private final ByteBuffer staging = ByteBuffer.allocate(CHUNK);
    private long written;
    /** Bytes of ours the peer has consumed; written by the peer's thread. */
    private volatile long consumedByPeer;
    private volatile boolean waitingForRoom;

    LoopbackEndpoint(LoopbackInstance owner, InetSocketAddress local, InetSocketAddress remote) {
        this.owner = owner;
        this.local = local;
        this.remote = remote;
    }

    void pair(LoopbackEndpoint other) {
        this.peer = other;
    }

    void handler(ConnectionHandler h) {
        this.handler = h;
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
        if (!closed.get() && transmitPending.compareAndSet(false, true)) {
            owner.execute(transmitTask);
        }
    }

    private void runTransmit() {
        transmitPending.set(false);
        ConnectionHandler h = handler;
        if (closed.get() || h == null) {
            return;
        }
        h.transmit(this);
        flushChunk();
    }

    @Override
    public boolean isWritable() {
        boolean room = written - consumedByPeer < owner.highWaterMark();
        if (!room) {
            waitingForRoom = true;
        }
        return room;
    }

    @Override
    public void write(ByteBuffer header, ByteBuffer payload) {
        copy(header);
        copy(payload);
    }

    private void copy(ByteBuffer src) {
        int pos = src.position();
        int end = src.limit();
        while (pos < end) {
            int n = Math.min(end - pos, staging.remaining());
            staging.put(staging.position(), src, pos, n);
            staging.position(staging.position() + n);
            pos += n;
            written += n;
            if (!staging.hasRemaining()) {
                flushChunk();
            }
        }
    }

    /** Hands what is staged to the peer, as a buffer of exactly that size. */
    private void flushChunk() {
        if (staging.position() == 0) {
            return;
        }
        ByteBuffer c = ByteBuffer.allocate(staging.position());
        c.put(staging.flip()).flip();
        staging.clear();
        peer.arrive(c, written);
    }

    @Override
    public long streamOffset() {
        return written;
    }

    // ------------------------------------------------------------------------------------------------ reading

    /** Called on the peer's thread: a chunk of the peer's stream arrived here. */
    private void arrive(ByteBuffer data, long endOffset) {
        synchronized (this) {
            if (closed.get()) {
                return;
            }
            inbound.addLast(data);
            inboundEnd = endOffset;
        }
        scheduleDelivery();
    }

    private void scheduleDelivery() {
        if (handler != null && deliveryPending.compareAndSet(false, true)) {
            owner.execute(deliverTask);
        }
    }

    /** On our thread: hand queued chunks to our handler, then tell the peer how far we got. */
    void deliverPending() {
        deliveryPending.set(false);
        ConnectionHandler h = handler;
        if (h == null) {
            return;
        }
        long end;
        boolean finished;
        while (true) {
            ByteBuffer data;
            synchronized (this) {
                data = inbound.pollFirst();
                end = inboundEnd;
                finished = peerFinished && inbound.isEmpty();
            }
            if (data == null || closed.get()) {
                break;
            }
            h.onBytes(data);
        }
        if (closed.get()) {
            return;
        }
        peer.consumed(end);
        if (finished) {
            closeLocally(null);
        }
    }

    /** Called on our reader's thread: the peer consumed our stream up to {@code offset}. */
    private void consumed(long offset) {
        consumedByPeer = offset;
        owner.execute(() -> {
            ConnectionHandler h = handler;
            if (h != null && !closed.get()) {
                h.onTransmitted(offset);
            }
        });
        if (waitingForRoom && written - offset < owner.highWaterMark() / 2) {
            waitingForRoom = false;
            requestTransmit();
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
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        synchronized (this) {
            inbound.clear();
        }
        owner.removed(this);
        owner.execute(() -> {
            ConnectionHandler h = handler;
            if (h != null) {
                h.onClosed(cause);
            }
        });
    }

    @Override
    public String toString() {
        return "LoopbackEndpoint[" + local + " -> " + remote + "]";
    }
}
