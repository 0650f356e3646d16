package org.rds4j.core.spi;

import java.lang.ref.Cleaner;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import org.rds4j.RdsMemoryInfo;
import org.rds4j.RdsStackConfig;

/**
 * A stack's account of direct (off-heap) memory against its bound ({@link RdsStackConfig#offHeapBytes()}). Two kinds
 * of holders count: the transports' pools, each of which reports what it holds from the operating system
 * ({@link #addPool}: read when the count is looked at, so a pool keeps its own counter and its hot path pays nothing
 * here), and the core's own direct buffers of large messages, reserved one by one ({@link #allocate}).
 *
 * <p>The bound is kept by refusing what can wait: a connection from a peer the stack does not keep yet, once the
 * count has reached {@link RdsStackConfig#OFF_HEAP_SHED_PERCENT} percent of the bound ({@link #roomForNewPeer}), so
 * the newest peers are shed first and the rest of the bound stays for the connections already kept; and a large
 * message's direct buffer past {@link #CORE_PERCENT} percent of the bound, which is then taken from the heap. A
 * transport's buffers for a connection it keeps are never refused: reads and writes of established connections do
 * not fail because others took memory, and the quarter of the bound above the shedding point is theirs.
 *
 * <p>Thread-safe: any thread reads and reserves.
 */
public final class OffHeapMemory {
    /**
     * The share of the bound, in percent, the core's buffers of large messages may take: the rest is for the
     * transports' pools, whose buffers for established connections are never refused.
     */
    public static final int CORE_PERCENT = 50;
    private static final Cleaner CLEANER = Cleaner.create();
    private static final Method INVOKE_CLEANER;
    private static final Object UNSAFE;

    static {
        Method m = null;
        Object u = null;
        try {
            Class<?> c = Class.forName("sun.misc.Unsafe");
            Field f = c.getDeclaredField("theUnsafe");
            f.setAccessible(true);
            u = f.get(null);
            m = c.getMethod("invokeCleaner", ByteBuffer.class);
        } catch (ReflectiveOperationException | RuntimeException e) {
            m = null;                                // freed by the collector instead; still counted until then
            u = null;
        }
        INVOKE_CLEANER = m;
        UNSAFE = u;
    }

    private final long bound;
    private final long shedAt;
    private final long coreShare;
    private final List<LongSupplier> pools = new CopyOnWriteArrayList<>();
    private final AtomicLong reserved = new AtomicLong();
    private final AtomicLong highWater = new AtomicLong();
    private final AtomicLong refusals = new AtomicLong();

    /** @param bound the bound in bytes */
    public OffHeapMemory(long bound) {
        this.bound = bound;
        this.shedAt = bound / 100 * RdsStackConfig.OFF_HEAP_SHED_PERCENT;
        this.coreShare = bound / 100 * CORE_PERCENT;
    }

    /**
     * Counts a transport pool's holding.
     *
     * @param usedBytes says how many bytes the pool holds now; called from any thread
     */
    public void addPool(LongSupplier usedBytes) {
        pools.add(usedBytes);
    }

    /**
     * Stops counting a pool (its transport closed).
     *
     * @param usedBytes the supplier given to {@link #addPool}
     */
    public void removePool(LongSupplier usedBytes) {
        pools.remove(usedBytes);
    }

    /**
     * The bound.
     *
     * @return the bound in bytes
     */
    public long bound() {
        return bound;
    }

    /**
     * The bytes taken now, pools and reserved buffers; raises the high-water mark.
     *
     * @return the bytes in use
     */
    public long inUse() {
        long n = sum();
        highWater.accumulateAndGet(n, Math::max);
        return n;
    }

    /**
     * The high-water mark.
     *
     * @return the most bytes seen in use at once
     */
    public long highWater() {
        return highWater.get();
    }

    /**
     * The refusals.
     *
     * @return connections refused and buffers taken from the heap because of the bound
     */
    public long refusals() {
        return refusals.get();
    }

    /**
     * Whether a connection from a peer the stack does not keep yet may be taken: the count is under the share of the
     * bound where new peers are shed. A refusal is counted.
     *
     * @return false to refuse the connection
     */
    public boolean roomForNewPeer() {
        if (inUse() < shedAt) {
            return true;
        }
        refusals.incrementAndGet();
        return false;
    }

    /**
     * A direct buffer of {@code capacity} bytes if the core's share of the bound ({@link #CORE_PERCENT} percent) has
     * room for it; else a heap buffer (counted as a refusal). For the core's buffers of large messages, which pools
     * keep and reuse: one is made only when a pool grows, never per message. Its owner frees it ({@link Block#free})
     * when it replaces it with a larger one; one it drops is counted until the collector frees it.
     *
     * @param capacity the buffer's capacity
     * @return a new block: a direct buffer when the bound allows, else a heap one
     */
    public Block allocate(int capacity) {
        if (!tryReserve(capacity)) {
            return new Block(ByteBuffer.allocate(capacity), null);
        }
        ByteBuffer b;
        try {
            b = ByteBuffer.allocateDirect(capacity);
        } catch (OutOfMemoryError e) {              // the JVM's own direct-memory limit, below ours
            unreserve(capacity);
            refusals.incrementAndGet();
            return new Block(ByteBuffer.allocate(capacity), null);
        }
        highWater.accumulateAndGet(sum(), Math::max);
        return new Block(b, CLEANER.register(b, new Release(reserved, capacity)));
    }

    /**
     * Counts {@code capacity} bytes against the core's share if it has room for them: added first, then checked, and
     * taken back if over, so that of two threads reserving at once at least one sees the other's bytes and the share
     * is never exceeded. A refusal is counted.
     *
     * @return false if refused (nothing stays reserved)
     */
    boolean tryReserve(int capacity) {
        reserved.addAndGet(capacity);
        if (sum() > coreShare) {
            reserved.addAndGet(-capacity);
            refusals.incrementAndGet();
            return false;
        }
        return true;
    }

    /** Takes back bytes {@link #tryReserve} counted. */
    void unreserve(int capacity) {
        reserved.addAndGet(-capacity);
    }

    /** The bytes taken now, without touching the high-water mark. */
    private long sum() {
        long n = reserved.get();
        for (LongSupplier p : pools) {
            n += p.getAsLong();
        }
        return n;
    }

    /**
     * The figures for {@code RdsStack.info()}.
     *
     * @return bound, bytes in use, high-water mark and refusals
     */
    public RdsMemoryInfo info() {
        long n = inUse();
        return new RdsMemoryInfo(bound, n, highWater(), refusals());
    }

    /**
     * A buffer from {@link #allocate}: direct and counted, or (past the bound) on the heap. One owner at a time.
     */
    public static final class Block {
        /** The memory: the whole buffer, never a slice. */
        public final ByteBuffer buffer;
        /** Gives the bytes back to the count, once; {@code null} for a heap buffer. */
        private final Cleaner.Cleanable release;

        private Block(ByteBuffer buffer, Cleaner.Cleanable release) {
            this.buffer = buffer;
            this.release = release;
        }

        /**
         * Frees the memory now and takes it off the count. The owner must hold the only use of the buffer: nothing may
         * touch it afterwards.
         */
        public void free() {
            if (release == null) {
                return;
            }
            if (INVOKE_CLEANER != null) {
                try {
                    INVOKE_CLEANER.invoke(UNSAFE, buffer);
                } catch (ReflectiveOperationException | RuntimeException e) {
                    return;                          // the collector frees it, and the count follows then
                }
            }
            release.clean();
        }
    }

    /** Gives a buffer's bytes back to the count; holds nothing that keeps the buffer reachable. */
    private record Release(AtomicLong reserved, int bytes) implements Runnable {
        @Override
        public void run() {
            reserved.addAndGet(-bytes);
        }
    }
}
