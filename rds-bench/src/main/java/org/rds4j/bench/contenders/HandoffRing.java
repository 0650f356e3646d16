package org.rds4j.bench.contenders;

import java.io.IOException;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * A single-producer, single-consumer ring of message slots between an application thread and an I/O thread of
 * {@link HandoffNioContender}: the hand-off rds4j makes twice on a message's way (sender to I/O thread, I/O thread to
 * reader), with nothing else of rds4j around it.
 *
 * <p>Each slot is a heap buffer as large as the cell's largest message, filled by the producer with one copy and
 * emptied by the consumer with one copy. Positions are two counters; the producer publishes with a release store and
 * the consumer frees with one, so neither takes a lock. A side that must wait (the producer on a full ring, the
 * consumer on an empty one) either polls, yielding between checks ({@code spin}), or records itself and parks; the
 * other side unparks it after its next publish or free, once per batch ({@link #wakeConsumer}, {@link
 * #wakeProducer}), as rds4j wakes a reader once per delivered batch.
 */
final class HandoffRing {
    /** How long a parked waiter sleeps at most before it checks again (a closed link, a lost race). */
    private static final long PARK_NANOS = 1_000_000;

    private final ByteBuffer[] slots;
    private final int mask;
    private final boolean spin;
    /** The next slot to fill; written by the producer only. */
    private final AtomicLong tail = new AtomicLong();
    /** The next slot to empty; written by the consumer only. */
    private final AtomicLong head = new AtomicLong();
    private volatile Thread parkedProducer;
    private volatile Thread parkedConsumer;

    /**
     * @param slots how many messages the ring holds, a power of two
     * @param slotSize the largest message
     * @param spin whether waiters yield between checks instead of parking
     */
    HandoffRing(int slots, int slotSize, boolean spin) {
        if (Integer.bitCount(slots) != 1) {
            throw new IllegalArgumentException("slots must be a power of two, not " + slots);
        }
        this.slots = new ByteBuffer[slots];
        for (int i = 0; i < slots; i++) {
            this.slots[i] = ByteBuffer.allocate(slotSize);
        }
        this.mask = slots - 1;
        this.spin = spin;
    }

    /** Slots for messages of {@code size} bytes: about 4 MiB of them, at least 4 and at most 1,024. */
    static int slotsFor(int size) {
        int n = Integer.highestOneBit(Math.max(1, (4 << 20) / Math.max(size, 64)));
        return Math.max(4, Math.min(1024, n));
    }

    // ------------------------------------------------------------------------------------------------ producer

    /** The producer's free slot, cleared, or {@code null} if the ring is full. */
    ByteBuffer tryClaim() {
        return full() ? null : slots[(int) (tail.get() & mask)].clear();
    }

    /** Whether the ring is full, as its producer sees it. */
    boolean full() {
        return tail.get() - head.get() == slots.length;
    }

    /** The producer's free slot, waiting for one (bounded by {@code link}'s state). */
    ByteBuffer claim(HandoffLinkState link) throws IOException {
        while (full()) {
            awaitTurn(link, true);
        }
        return tryClaim();
    }

    /** Publishes the claimed slot, which holds a message from position 0 to its position. */
    void publish() {
        long t = tail.get();
        slots[(int) (t & mask)].flip();
        tail.lazySet(t + 1);
    }

    /** After a batch of publishes: unparks the consumer if it waits. */
    void wakeConsumer() {
        if (spin) {
            return;                                  // nobody parks
        }
        // The publishes were release stores: this fence orders them before the read below, against the consumer
        // that records itself and then checks again (otherwise both could miss each other until the park times out).
        VarHandle.fullFence();
        Thread c = parkedConsumer;
        if (c != null) {
            LockSupport.unpark(c);
        }
    }

    // ------------------------------------------------------------------------------------------------ consumer

    /** The oldest published message (position 0, limit its length), or {@code null} if there is none. */
    ByteBuffer peek() {
        long h = head.get();
        if (h == tail.get()) {
            return null;
        }
        return slots[(int) (h & mask)];
    }

    /** The oldest published message, waiting for one (bounded by {@code link}'s state). */
    ByteBuffer take(HandoffLinkState link) throws IOException {
        ByteBuffer m;
        while ((m = peek()) == null) {
            awaitTurn(link, false);
        }
        return m;
    }

    /**
     * The oldest published message, yielding between checks until {@code until} ({@link System#nanoTime}) at the
     * latest; {@code null} if none came by then.
     */
    ByteBuffer pollUntil(long until, HandoffLinkState link) throws IOException {
        ByteBuffer m;
        while ((m = peek()) == null) {
            link.check();
            if (System.nanoTime() - until >= 0) {
                return null;
            }
            Thread.yield();
        }
        return m;
    }

    /** Whether waiters yield between checks instead of parking. */
    boolean spins() {
        return spin;
    }

    /**
     * One wait of the producer for room ({@code producer}) or of the consumer for a message: a yield when spinning,
     * else a park, once the waiter has recorded itself and checked again (the other side reads the record after its
     * fence: {@link #wakeConsumer}, {@link #wakeProducer}).
     */
    private void awaitTurn(HandoffLinkState link, boolean producer) throws IOException {
        link.check();
        if (spin) {
            Thread.yield();
            return;
        }
        Thread me = Thread.currentThread();
        if (producer) {
            parkedProducer = me;
        } else {
            parkedConsumer = me;
        }
        if (producer ? full() : peek() == null) {
            LockSupport.parkNanos(this, PARK_NANOS);
        }
        if (producer) {
            parkedProducer = null;
        } else {
            parkedConsumer = null;
        }
    }

    /** Frees the slot {@link #peek} or {@link #take} returned. */
    void free() {
        head.lazySet(head.get() + 1);
    }

    /** After a batch of frees: unparks the producer if it waits for room. */
    void wakeProducer() {
        if (spin) {
            return;
        }
        VarHandle.fullFence();                       // as in wakeConsumer
        Thread p = parkedProducer;
        if (p != null) {
            LockSupport.unpark(p);
        }
    }

    /** Unparks both sides, for a closing link. */
    void wakeAll() {
        wakeConsumer();
        wakeProducer();
    }
}
