package org.rds4j.core.util;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.function.Supplier;

/**
 * A fixed-capacity pool of reusable objects that any thread may take from and give back to, without locks and
 * without allocating: Dmitry Vyukov's bounded multi-producer multi-consumer queue, where each slot carries a
 * sequence number that says whose turn it is. A full pool drops what is given back (the garbage collector takes it);
 * an empty pool makes a new object. Objects come out in the order they went in, so the loopback transport also uses
 * it as its task queue.
 *
 * <p>Why not a lock-free stack: objects here are reused, so a Treiber stack's compare-and-set can succeed on a head
 * that was taken and given back meanwhile (ABA) and corrupt the list. The sequence numbers rule that out.
 */
public final class BoundedPool<T> {
    private static final VarHandle SEQ = MethodHandles.arrayElementVarHandle(long[].class);
    private static final VarHandle ITEM = MethodHandles.arrayElementVarHandle(Object[].class);
    private static final VarHandle POSITION = MethodHandles.arrayElementVarHandle(long[].class);
    /** Where {@link #positions} keeps the next slot to take from, and the next to give back to: 128 bytes apart. */
    private static final int HEAD = 8;
    private static final int TAIL = 24;

    private final long[] sequences;
    private final Object[] items;
    private final int mask;
    private final Supplier<T> factory;
    /**
     * The head and the tail, each on a cache line of its own with padding on both sides: the pool's takers and its
     * givers are usually different threads (a socket's I/O thread takes an arrival for every message it decodes, its
     * reader gives one back for every message it reads), and as two fields side by side each one's write cost the
     * other thread a cache miss.
     */
    private final long[] positions = new long[TAIL + 8];

    /**
     * An empty pool.
     *
     * @param capacity rounded up to a power of two, at least 4
     * @param factory makes a new object when the pool is empty
     */
    public BoundedPool(int capacity, Supplier<T> factory) {
        int n = Integer.highestOneBit(Math.max(2, capacity - 1)) << 1;
        this.sequences = new long[n];
        this.items = new Object[n];
        this.mask = n - 1;
        this.factory = factory;
        for (int i = 0; i < n; i++) {
            sequences[i] = i;
        }
    }

    /**
     * An object from the pool, or a new one when the pool is empty.
     *
     * @return the object, never {@code null}
     */
    public T take() {
        T t = poll();
        return t != null ? t : factory.get();
    }

    /**
     * An object from the pool, or {@code null} when it is empty.
     *
     * @return the object, or {@code null}
     */
    @SuppressWarnings("unchecked")
    public T poll() {
        long pos = (long) POSITION.getVolatile(positions, HEAD);
        while (true) {
            int slot = (int) pos & mask;
            long seq = (long) SEQ.getAcquire(sequences, slot);
            long diff = seq - (pos + 1);
            if (diff == 0) {
                if (POSITION.compareAndSet(positions, HEAD, pos, pos + 1)) {
                    Object item = ITEM.get(items, slot);
                    ITEM.set(items, slot, null);
                    SEQ.setRelease(sequences, slot, pos + mask + 1);
                    return (T) item;
                }
                pos = (long) POSITION.getVolatile(positions, HEAD);
            } else if (diff < 0) {
                return null;                              // empty
            } else {
                pos = (long) POSITION.getVolatile(positions, HEAD);      // another taker won this slot
            }
        }
    }

    /**
     * Gives an object back.
     *
     * @param item the object, which the caller must no longer use
     * @return true if pooled, false (and dropped) when the pool is full
     */
    public boolean offer(T item) {
        long pos = (long) POSITION.getVolatile(positions, TAIL);
        while (true) {
            int slot = (int) pos & mask;
            long seq = (long) SEQ.getAcquire(sequences, slot);
            long diff = seq - pos;
            if (diff == 0) {
                if (POSITION.compareAndSet(positions, TAIL, pos, pos + 1)) {
                    ITEM.set(items, slot, item);
                    SEQ.setRelease(sequences, slot, pos + 1);
                    return true;
                }
                pos = (long) POSITION.getVolatile(positions, TAIL);
            } else if (diff < 0) {
                return false;                             // full
            } else {
                pos = (long) POSITION.getVolatile(positions, TAIL);
            }
        }
    }

    /**
     * How many objects the pool can hold.
     *
     * @return the capacity, a power of two
     */
    public int capacity() {
        return mask + 1;
    }
}
