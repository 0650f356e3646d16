package org.rds4j.core.path;

/**
 * The messages one read of a connection decoded, gathered per receiving socket so that each socket takes them in one
 * call: one lock and one wake-up of its reader per read, however many messages the read held. Used by one I/O
 * thread only; holds a handful of sockets (a read rarely feeds more), flushing the oldest when a new one comes.
 */
final class DeliveryBatch {
    private static final int SOCKETS = 8;

    private final MessageReceiver[] receivers = new MessageReceiver[SOCKETS];
    private final Arrival[] firsts = new Arrival[SOCKETS];
    private final Arrival[] lasts = new Arrival[SOCKETS];
    /** Messages per socket: a run counts each of its own. */
    private final int[] counts = new int[SOCKETS];
    private final long[] bytes = new long[SOCKETS];
    private int used;
    /** Where {@link #last} found its socket, for the {@link #joined} that follows it. */
    private int lastFound;

    /** Adds {@code a} for {@code r}, after the arrivals already gathered for it. */
    void add(MessageReceiver r, Arrival a) {
        a.next = null;
        int i = indexOf(r);
        if (i < 0) {
            if (used == SOCKETS) {
                flush(0);
                System.arraycopy(receivers, 1, receivers, 0, SOCKETS - 1);
                System.arraycopy(firsts, 1, firsts, 0, SOCKETS - 1);
                System.arraycopy(lasts, 1, lasts, 0, SOCKETS - 1);
                System.arraycopy(counts, 1, counts, 0, SOCKETS - 1);
                System.arraycopy(bytes, 1, bytes, 0, SOCKETS - 1);
                used--;
            }
            i = used++;
            receivers[i] = r;
            firsts[i] = a;
            lasts[i] = a;
            counts[i] = 1;
            bytes[i] = a.length();
            return;
        }
        lasts[i].next = a;
        lasts[i] = a;
        counts[i]++;
        bytes[i] += a.length();
    }

    /**
     * The arrival gathered last for {@code r}, which the next small message for it may join as a run
     * ({@link Arrival#runSlot}); then {@link #joined}.
     */
    Arrival last(MessageReceiver r) {
        int i = indexOf(r);
        lastFound = i;
        return i < 0 ? null : lasts[i];
    }

    /** A message of {@code length} bytes joined the arrival {@link #last} just returned. */
    void joined(int length) {
        int i = lastFound;
        counts[i]++;
        bytes[i] += length;
    }

    /** Whether arrivals for {@code r} are gathered, to be delivered ahead of anything decoded after them. */
    boolean holds(MessageReceiver r) {
        return indexOf(r) >= 0;
    }

    /** Hands every socket its arrivals. */
    void flush() {
        for (int i = 0; i < used; i++) {
            flush(i);
        }
        for (int i = 0; i < used; i++) {
            receivers[i] = null;
        }
        used = 0;
    }

    /** Under caller I/O, the path whose reads gather into this batch: its sockets' busy-polling readers poll it. */
    private ConnectionPath source;

    void source(ConnectionPath path) {
        source = path.connection().callerIo() ? path : null;
    }

    private void flush(int i) {
        MessageReceiver r = receivers[i];
        if (source != null) {
            r.deliveredBy(source);
        }
        Arrival first = firsts[i];
        Arrival last = lasts[i];
        firsts[i] = null;
        lasts[i] = null;
        r.deliver(first, last, counts[i], bytes[i]);
    }

    private int indexOf(MessageReceiver r) {
        for (int i = used - 1; i >= 0; i--) {
            if (receivers[i] == r) {
                return i;
            }
        }
        return -1;
    }
}
