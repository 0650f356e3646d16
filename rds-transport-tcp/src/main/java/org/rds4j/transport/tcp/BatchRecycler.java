package org.rds4j.transport.tcp;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.util.ResourceLeakDetector;
import io.netty.util.concurrent.FastThreadLocal;
import java.util.ArrayDeque;

/**
 * The batch buffers of one I/O thread, used again once written instead of being allocated for every batch: a
 * transmit pass starts at least one batch, a round trip of small messages makes four passes, and a 1 MiB message
 * fills 32 batches. Each allocation from Netty's pool costs its thread cache, its recycler and the leak detector's
 * sampling, which at its default level records a stack for one allocation in 128: most of the bytes rds4j allocated
 * per message at 64 KiB and above.
 *
 * <p>The recycler keeps one reference to each of up to {@value #MAX_KEPT} batches, oldest first. A batch whose only
 * reference left is the recycler's has been written (or failed) and released by Netty, so it can be handed out again;
 * the oldest is checked, since batches leave in the order they were written. When the oldest is still out (its
 * connection is backed up) a new batch is allocated, and if the recycler is full it lets the oldest go: Netty frees it
 * once written, as it would have without the recycler. So an I/O thread holds at most {@value #MAX_KEPT} batches
 * (256 KiB) for all its connections, and an idle one no more.
 *
 * <p>A batch keeps the leak detector's wrapper it was allocated with (at {@code SIMPLE}, one batch in 128 is tracked
 * and stays tracked while it is reused). When the detector's level changes, the recycler lets go of what it keeps
 * and starts again, so that its batches are always tracked as the current level says: at {@code ADVANCED} and
 * {@code PARANOID} each access to a tracked buffer records a stack, and a batch kept from such a level would go on
 * recording after the level was lowered.
 *
 * <p>Used only on its own I/O thread; its batches are released when the thread ends (Netty removes its threads'
 * {@link FastThreadLocal}s as an event loop stops).
 */
final class BatchRecycler {
    /** Batches kept per I/O thread: a send budget's worth (106,496 bytes by default) with room for backlog. */
    static final int MAX_KEPT = 8;

    private static final FastThreadLocal<BatchRecycler> CURRENT = new FastThreadLocal<>() {
        @Override
        protected BatchRecycler initialValue() {
            return new BatchRecycler(BatchingFrameSink.BATCH_SIZE);
        }

        @Override
        protected void onRemoval(BatchRecycler recycler) {
            recycler.releaseAll();
        }
    };

    private final int size;
    private final ArrayDeque<ByteBuf> kept = new ArrayDeque<>(MAX_KEPT);
    private long reused;
    private long allocated;
    /** The leak detector's level when the kept batches were allocated. */
    private ResourceLeakDetector.Level keptUnder = ResourceLeakDetector.getLevel();

    BatchRecycler(int size) {
        this.size = size;
    }

    /** The calling I/O thread's recycler of {@link BatchingFrameSink#BATCH_SIZE} batches. */
    static BatchRecycler current() {
        return CURRENT.get();
    }

    /**
     * An empty direct buffer of the recycler's size for the caller to fill and write (Netty's release after the write
     * gives it back), or to release itself if it is not written.
     *
     * @param alloc where a new batch comes from when none is free
     * @return a buffer with reader and writer index 0 and one reference, the caller's
     */
    ByteBuf take(ByteBufAllocator alloc) {
        ResourceLeakDetector.Level level = ResourceLeakDetector.getLevel();
        if (level != keptUnder) {
            releaseAll();
            keptUnder = level;
        }
        ByteBuf oldest = kept.peekFirst();
        if (oldest != null && oldest.refCnt() == 1) {
            kept.pollFirst();
            kept.addLast(oldest);
            reused++;
            return oldest.retain().clear();
        }
        ByteBuf b = alloc.directBuffer(size, size);
        allocated++;
        if (kept.size() == MAX_KEPT) {
            kept.pollFirst().release();             // still out: Netty frees it once written
        }
        kept.addLast(b.retain());
        return b;
    }

    /** Batches handed out again. */
    long reused() {
        return reused;
    }

    /** Batches allocated. */
    long allocated() {
        return allocated;
    }

    /** Batches the recycler holds a reference to. */
    int kept() {
        return kept.size();
    }

    /** Lets every batch go (those still out are freed by Netty once written). */
    void releaseAll() {
        for (ByteBuf b; (b = kept.pollFirst()) != null; ) {
            b.release();
        }
    }
}
