package org.rds4j.core.path;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import org.rds4j.core.spi.FrameSink;
import org.rds4j.core.wire.HeaderEncoder;
import org.rds4j.core.wire.RdsHeader;

/**
 * The small messages one queue entry carries: consecutive sends of one socket to one port of one peer, their payloads
 * back to back in the entry's buffer. Each is still a message of its own on the wire, with its own sequence number
 * and header; only the queue holds them as one. A sender whose last message still waits in the path's inbox appends
 * the next one to it instead of queueing a message of its own, so the path takes in, numbers, keeps and releases one
 * object for many messages (docs/decisions/0008-small-sends-travel-in-runs.md).
 *
 * <p>Appending races with the path taking the entry in. A sender first reserves the next slot with one
 * compare-and-set on {@link #state}, which fails once the path has sealed the run; only then does it write the
 * payload, and it publishes the slot with a release store to {@link #published}. The path seals with one atomic
 * {@code or}, and takes every slot reserved before the seal, waiting for the one being written if need be (a copy of
 * at most {@link #ENTRY_MAX} bytes). So a slot is either in the run before its number is given, or the sender knows it
 * is not and queues the message otherwise. One sender appends at a time (the socket's {@code SendCoalescer}).
 */
final class MessageRun {
    /** Messages larger than this are queued on their own: for them a message object per send costs little. */
    static final int ENTRY_MAX = 1024;
    /** The most messages one run carries. */
    static final int MAX_ENTRIES = 64;
    /** The largest buffer a run grows to; a socket's runs start with the size of one message and double. */
    static final int MAX_BYTES = 4096;

    private static final int SEALED = 1 << 30;
    private static final VarHandle STATE;
    private static final VarHandle PUBLISHED;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            STATE = l.findVarHandle(MessageRun.class, "state", int.class);
            PUBLISHED = l.findVarHandle(MessageRun.class, "published", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final int[] lengths = new int[MAX_ENTRIES];
    /** Slots reserved, with {@link #SEALED} once the path took the run in. */
    @SuppressWarnings("unused")       // through STATE
    private volatile int state;
    /** Slots whose payload is written. */
    @SuppressWarnings("unused")       // through PUBLISHED
    private volatile int published;
    /** A message appended asked for a prompt acknowledgement (written before its slot is published). */
    private boolean ask;
    /** Where the next payload goes: the appending sender's alone. */
    private int fill;
    /** After the seal: the messages' bytes; -1 before. */
    private long bytes;
    /** A view of the buffer, for one message's payload at a time. */
    private ByteBuffer view;
    private ByteBuffer viewOf;

    /** The first message: its payload is already at the start of {@code buffer}. Before the entry is queued. */
    void start(ByteBuffer buffer, int firstLength) {
        if (viewOf != buffer) {
            view = buffer.duplicate();
            viewOf = buffer;
        }
        lengths[0] = firstLength;
        fill = firstLength;
        ask = false;
        bytes = -1;
        PUBLISHED.setRelease(this, 1);
        STATE.setRelease(this, 1);
    }

    /** The entry is not a run (or no longer): appends fail. */
    void close() {
        STATE.setRelease(this, SEALED);
    }

    /** {@link #append}'s answers. */
    static final int APPENDED = 1;
    static final int TAKEN = 0;
    static final int FULL = -1;

    /**
     * The sender: appends {@code data}'s remaining bytes unless the path has taken the run in or it is full.
     *
     * @param buffer the entry's buffer
     * @param data the payload, copied; its position is left unchanged
     * @param askForAck whether the sender's budget was at least half full
     * @return {@link #APPENDED}; {@link #TAKEN} if the path has taken the run in (or it holds its most messages);
     *         {@link #FULL} if it was still open but its buffer had no room for these bytes
     */
    int append(ByteBuffer buffer, ByteBuffer data, boolean askForAck) {
        int len = data.remaining();
        int slot = (int) STATE.getVolatile(this);
        if (slot >= MAX_ENTRIES) {                    // SEALED is above it
            return TAKEN;
        }
        if (fill + len > buffer.capacity()) {
            return FULL;
        }
        if (!STATE.compareAndSet(this, slot, slot + 1)) {
            return TAKEN;                             // sealed meanwhile
        }
        buffer.put(fill, data, data.position(), len);
        lengths[slot] = len;
        fill += len;
        if (askForAck) {
            ask = true;
        }
        PUBLISHED.setRelease(this, slot + 1);
        return APPENDED;
    }

    /**
     * The path, taking the run in: no more appends; waits for a slot still being written.
     *
     * @return how many messages the run holds
     */
    int seal() {
        int reserved = (int) STATE.getAndBitwiseOr(this, SEALED) & ~SEALED;
        for (int spins = 0; (int) PUBLISHED.getAcquire(this) < reserved; spins++) {
            if (spins < 100) {
                Thread.onSpinWait();
            } else {
                Thread.yield();                       // the appending sender lost its core mid-copy
            }
        }
        bytes = sum(reserved);
        return reserved;
    }

    /** Messages in the run: those written so far, which once sealed are all of them. */
    int count() {
        return (int) PUBLISHED.getAcquire(this);
    }

    /** Their payload bytes: all once sealed, else those written so far (for inspection). */
    long bytes() {
        long b = bytes;
        return b >= 0 ? b : sum(count());
    }

    private long sum(int n) {
        long b = 0;
        for (int i = 0; i < n; i++) {
            b += lengths[i];
        }
        return b;
    }

    /** The payload length of message {@code i} of a sealed run. */
    int length(int i) {
        return lengths[i];
    }

    /**
     * Writes the run's messages, numbered from {@code firstSeq}, each framed like a message of its own. Only the
     * last asks for a prompt acknowledgement, and only if the peer acknowledges ({@code askForAck}) and any of them
     * asked ({@code ackRequired}: the first; later ones through {@link #append}).
     */
    void write(FrameSink sink, HeaderEncoder e, long firstSeq, long ack, int sourcePort, int destinationPort,
               boolean retransmit, boolean askForAck, boolean ackRequired) {
        boolean asks = askForAck && (ackRequired || ask);
        int off = 0;
        ByteBuffer v = view;
        int n = count();
        ByteBuffer dst = sink.claim(n * RdsHeader.SIZE + (int) bytes());
        if (dst != null) {
            // The run's frames laid out in the sink's own buffer: no per-frame write calls, no header copy.
            int at = dst.position();
            v.limit(v.capacity());                    // absolute copies check against the limit
            for (int i = 0; i < n; i++) {
                int len = lengths[i];
                HeaderEncoder.encodeInto(dst, at, firstSeq + i, ack, len, sourcePort, destinationPort,
                        flags(i == n - 1, retransmit, asks));
                at += RdsHeader.SIZE;
                dst.put(at, v, off, len);
                at += len;
                off += len;
            }
            return;
        }
        for (int i = 0; i < n; i++) {
            int len = lengths[i];
            e.encode(firstSeq + i, ack, len, sourcePort, destinationPort, flags(i == n - 1, retransmit, asks), null);
            v.limit(off + len).position(off);
            sink.write(e.buffer(), v);
            off += len;
        }
    }

    /** A frame's h_flags: every one marked if resent, only the run's last asking for a prompt acknowledgement. */
    private static int flags(boolean last, boolean retransmit, boolean asks) {
        return (retransmit ? RdsHeader.FLAG_RETRANSMITTED : 0) | (asks && last ? RdsHeader.FLAG_ACK_REQUIRED : 0);
    }
}
