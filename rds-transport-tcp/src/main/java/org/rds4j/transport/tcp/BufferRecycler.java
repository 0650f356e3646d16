package org.rds4j.transport.tcp;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.util.ResourceLeakDetector;
import io.netty.util.concurrent.FastThreadLocal;

/**
 * Direct buffers of one I/O thread, used again once done with instead of being allocated each time: the batches a
 * transmit pass writes ({@link #writeBatches()}: at least one per pass, four passes per round trip of small messages,
 * 32 for a 1 MiB message) and the buffers its channels read into ({@link #readBuffers()}: one per read). Each
 * allocation from Netty's pool costs its thread cache, its recycler and the leak detector's sampling, which at its
 * default level records a stack for one allocation in 128: most of the bytes rds4j allocated per message from 8 KiB
 * up.
 *
 * <p>A recycler keeps one reference to each of up to {@link #maxKept} buffers, in the order it last handed them out.
 * A buffer whose only reference left is the recycler's has been written (or failed) and released by Netty, or read
 * and released by the connection, so it can be handed out again. Buffers come back in the order they were handed
 * out, so the newest one that is back is the one given back last, the one most likely still in the cache: that is
 * the one handed out (a first version handed out the oldest and moved 8 KiB messages slower than Netty's pool). When
 * none is back (its connection is backed up, or TLS holds read bytes) a new buffer is allocated, and if the recycler
 * is full it lets the oldest go: whoever holds it frees it once done, as without the recycler. So an I/O thread holds
 * at most {@value #MAX_BATCHES} batches of 32 KiB and {@value #MAX_READS} read buffers of 256 KiB (2 MiB) for all
 * its connections, and an idle one no more than it once had out.
 *
 * <p>A buffer keeps the leak detector's wrapper it was allocated with. At {@code SIMPLE}, Netty's default, the
 * detector tracks one allocation in 128, and every slice of a tracked buffer is tracked too, a stack trace each: a
 * tracked batch kept here cost each frame written from it as a slice (a header ahead of a lent payload) about 1.5 KB
 * of garbage for as long as it was reused (1,560 bytes per 64 KiB message in {@code TcpAllocationTest}). So at
 * {@code SIMPLE} a tracked buffer is handed out once and not kept: its holder frees it, and the detector still sees
 * it. At {@code ADVANCED} and {@code PARANOID}, levels for finding leaks that record at every access anyway, tracked
 * buffers are kept as the others. When the detector's level changes, the recycler lets go of what it keeps and
 * starts again, so that its buffers are always tracked as the current level says: a buffer kept from a level that
 * records at every access would go on recording after the level was lowered.
 *
 * <p>Used only on its own I/O thread; its buffers are released when the thread ends (Netty removes its threads'
 * {@link FastThreadLocal}s as an event loop stops).
 */
final class BufferRecycler {
    /**
     * Batches kept per I/O thread: a megabyte-sized message's worth. A 1 MiB message is 33 batches, and with 8 kept
     * (a default send budget's worth) every such message let most of its batches go and allocated new ones (measured
     * in docs/decisions/0003-tcp-write-batches-and-the-recycler.md).
     */
    static final int MAX_BATCHES = 32;
    /** Read buffers kept per I/O thread: a plain connection gives each back before the next read. */
    static final int MAX_READS = 4;
    /**
     * The size of a read buffer: more than a socket's default send budget (106,496 bytes), so that one read takes
     * what the peer's socket has in flight, with one delivery batch and one acknowledgement for all of it, and a
     * 64 KiB message with its header in one read. 64 KiB (the most Netty's adaptive guess reads) was slower at 8 KiB
     * and 64 KiB messages, and 1 MiB no faster than 256 KiB (docs/decisions/0004-tcp-reads-of-256-kib.md).
     */
    static final int READ_SIZE = 256 * 1024;

    private static final FastThreadLocal<BufferRecycler> BATCHES = new FastThreadLocal<>() {
        @Override
        protected BufferRecycler initialValue() {
            return new BufferRecycler(BatchingFrameSink.BATCH_SIZE, MAX_BATCHES);
        }

        @Override
        protected void onRemoval(BufferRecycler recycler) {
            recycler.releaseAll();
        }
    };

    private static final FastThreadLocal<BufferRecycler> READS = new FastThreadLocal<>() {
        @Override
        protected BufferRecycler initialValue() {
            return new BufferRecycler(READ_SIZE, MAX_READS);
        }

        @Override
        protected void onRemoval(BufferRecycler recycler) {
            recycler.releaseAll();
        }
    };

    private final int size;
    private final int maxKept;
    /** Kept buffers, {@code kept[0]} handed out longest ago; {@code count} of them. */
    private final ByteBuf[] kept;
    private int count;
    private long reused;
    private long allocated;
    /** The leak detector's level when the kept buffers were allocated. */
    private ResourceLeakDetector.Level keptUnder = ResourceLeakDetector.getLevel();

    BufferRecycler(int size, int maxKept) {
        this.size = size;
        this.maxKept = maxKept;
        this.kept = new ByteBuf[maxKept];
    }

    /** The calling I/O thread's recycler of {@link BatchingFrameSink#BATCH_SIZE} batches. */
    static BufferRecycler writeBatches() {
        return BATCHES.get();
    }

    /** The calling I/O thread's recycler of {@value #READ_SIZE}-byte read buffers. */
    static BufferRecycler readBuffers() {
        return READS.get();
    }

    /**
     * An empty direct buffer of the recycler's size for the caller to fill and hand on (whoever releases it last gives it
     * back), or to release itself.
     *
     * @param alloc where a new buffer comes from when none is free
     * @return a buffer with reader and writer index 0 and one reference, the caller's
     */
    ByteBuf take(ByteBufAllocator alloc) {
        ResourceLeakDetector.Level level = ResourceLeakDetector.getLevel();
        if (level != keptUnder) {
            releaseAll();
            keptUnder = level;
        }
        for (int i = count - 1; i >= 0; i--) {
            ByteBuf b = kept[i];
            if (b.refCnt() == 1) {
                moveToNewest(i);
                reused++;
                return b.retain().clear();
            }
        }
        ByteBuf b = alloc.directBuffer(size, size);
        allocated++;
        if (level == ResourceLeakDetector.Level.SIMPLE && b.unwrap() != null) {
            return b;                               // the leak detector's wrapper: tracked, so used once (above)
        }
        if (count == maxKept) {
            ByteBuf oldest = kept[0];
            moveToNewest(0);
            count--;
            oldest.release();                       // still out: its holder frees it once done
        }
        kept[count++] = b.retain();
        return b;
    }

    /** Moves {@code kept[i]} to the newest end, the others keeping their order. */
    private void moveToNewest(int i) {
        ByteBuf b = kept[i];
        System.arraycopy(kept, i + 1, kept, i, count - 1 - i);
        kept[count - 1] = b;
    }

    /** The size of the buffers it hands out. */
    int size() {
        return size;
    }

    /** Buffers handed out again. */
    long reused() {
        return reused;
    }

    /** Buffers allocated. */
    long allocated() {
        return allocated;
    }

    /** Buffers the recycler holds a reference to. */
    int kept() {
        return count;
    }

    /** Lets every buffer go (those still out are freed by their holders once done). */
    void releaseAll() {
        for (int i = 0; i < count; i++) {
            kept[i].release();
            kept[i] = null;
        }
        count = 0;
    }
}
