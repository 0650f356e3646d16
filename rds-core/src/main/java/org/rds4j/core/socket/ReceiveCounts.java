package org.rds4j.core.socket;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import org.rds4j.core.stack.RdsCounters;
import org.rds4j.core.stack.RdsCounters.Counter;

/**
 * One socket's share of the stack's {@code recv_delivered} and {@code recv_bytes_freed_fromsock}. Its readers take
 * messages under the receive queue's lock, so they count here with plain stores under that lock instead of with two
 * atomic adds per message on the stack's counters; the stack's reads add this share ({@link RdsCounters.Source}), and
 * the socket's close moves it into the stack's counters. Every method but {@link #share} is called under the lock
 * that orders the socket's takes.
 */
final class ReceiveCounts implements RdsCounters.Source {
    private static final VarHandle DELIVERED;
    private static final VarHandle BYTES;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            DELIVERED = l.findVarHandle(ReceiveCounts.class, "delivered", long.class);
            BYTES = l.findVarHandle(ReceiveCounts.class, "bytes", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final RdsCounters counters;
    /** Stored opaque: the stack's reads load them without the lock. */
    private long delivered;
    private long bytes;
    private boolean folded;

    ReceiveCounts(RdsCounters counters) {
        this.counters = counters;
        counters.addSource(this);
    }

    /** A reader took a message of {@code length} payload bytes. Under the lock. */
    void taken(int length) {
        if (folded) {                               // the socket closed: its share is the stack's now
            counters.increment(Counter.RECV_DELIVERED);
            counters.add(Counter.RECV_BYTES_FREED_FROMSOCK, length);
            return;
        }
        DELIVERED.setOpaque(this, delivered + 1);
        BYTES.setOpaque(this, bytes + length);
    }

    /** The socket closes: its share moves into the stack's counters. Under the lock; once. */
    void fold() {
        if (!folded) {
            counters.fold(this);
            folded = true;
        }
    }

    @Override
    public long share(Counter c) {
        return switch (c) {
            case RECV_DELIVERED -> (long) DELIVERED.getOpaque(this);
            case RECV_BYTES_FREED_FROMSOCK -> (long) BYTES.getOpaque(this);
            default -> 0;
        };
    }
}
