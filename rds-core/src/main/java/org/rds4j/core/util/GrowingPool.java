package org.rds4j.core.util;

import java.util.function.Supplier;

/**
 * A {@link BoundedPool} that doubles its capacity, up to a maximum, when something given back finds it full: a
 * socket's pool grows to the number of messages it really holds in flight (a 2 MiB send budget holds 32 Ki 64-byte
 * messages, a 64 KiB one a thousand), so steady traffic allocates nothing however the budget is set, and an idle
 * socket keeps a small pool.
 *
 * <p>Growing replaces the pool and moves what the old one holds into the new one; an object given back to the old
 * pool by a thread that had not yet seen the new one is left to the garbage collector, and so are those behind a slot
 * such a thread had taken and not yet filled when the move reached it (the move stops at that slot; model checking
 * found two objects left behind so). Nothing is lost but an allocation, since pooled objects are interchangeable.
 *
 * <p>What a pool holds is bounded by what its owner once had out at the same time (for a socket: its send budget's
 * worth of messages, or its receive queue's worth of arrivals), so a pool needs no byte limit of its own.
 */
public final class GrowingPool<T> {
    private final Supplier<T> factory;
    private final int maxCapacity;
    private volatile BoundedPool<T> pool;

    /**
     * An empty pool of {@code initialCapacity}.
     *
     * @param initialCapacity the first capacity, rounded up to a power of two
     * @param maxCapacity the capacity beyond which the pool no longer grows
     * @param factory makes a new object when the pool is empty
     */
    public GrowingPool(int initialCapacity, int maxCapacity, Supplier<T> factory) {
        this.factory = factory;
        this.maxCapacity = maxCapacity;
        this.pool = new BoundedPool<>(initialCapacity, factory);
    }

    /**
     * An object from the pool, or a new one.
     *
     * @return the object, never {@code null}
     */
    public T take() {
        T t = pool.poll();
        return t != null ? t : factory.get();
    }

    /**
     * Gives an object back, growing the pool if it is full and below its maximum.
     *
     * @param item the object, which the caller must no longer use
     * @return true if pooled, false if it was dropped
     */
    public boolean offer(T item) {
        BoundedPool<T> p = pool;
        if (p.offer(item)) {
            return true;
        }
        if (p.capacity() >= maxCapacity) {
            return false;
        }
        synchronized (this) {
            if (pool == p) {
                BoundedPool<T> grown = new BoundedPool<>(p.capacity() * 2, factory);
                for (T t; (t = p.poll()) != null; ) {
                    grown.offer(t);
                }
                pool = grown;
            }
        }
        return pool.offer(item);
    }
}
