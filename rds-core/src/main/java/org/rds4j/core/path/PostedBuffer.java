package org.rds4j.core.path;

import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicInteger;
import org.rds4j.core.spi.ReadTarget;

/**
 * A reader's own buffer, offered while it waits on an empty receive queue, so that the I/O thread decodes the next
 * large message straight into it: the copy out of an arrival then leaves the round trip (about a seventh of a 1 MiB
 * round trip, docs/decisions/0006-posted-buffers.md). One per socket, one reader's buffer at a time.
 *
 * <p>States, and who moves them ("lock": the receive queue's):
 * <ul>
 *   <li>IDLE to POSTED: a reader about to park, under the lock; back to IDLE when it stops waiting.</li>
 *   <li>POSTED to WRITING: the I/O thread, under the lock, for a message of at least {@link #MIN} bytes whose header
 *       it just decoded, when nothing is queued ahead of it; it writes the payload into the reader's buffer.</li>
 *   <li>WRITING to CLAIMED at the end of a read that left the message incomplete, and back at the next read.</li>
 *   <li>WRITING to FILLED: the I/O thread, under the lock, when the message is complete and accepted; it wakes the
 *       reader, which takes it (FILLED to IDLE). WRITING to POSTED if it was a duplicate; CLAIMED to POSTED if the
 *       connection closed before the message was whole.</li>
 *   <li>CLAIMED to REVOKING to REVOKED: a reader that stops waiting mid-message (time out, a notification or another
 *       message to return first, a close) copies the bytes so far into the arrival's own buffer and returns; the I/O
 *       thread carries on into that buffer at its next read (REVOKED to IDLE). A reader never returns, and never lets
 *       the caller touch its buffer, while the I/O thread may write into it.</li>
 * </ul>
 */
public final class PostedBuffer implements ReadTarget {
    /** Smaller messages are copied as before: their copy costs less than the hand-over. */
    public static final int MIN = 64 * 1024;

    static final int IDLE = 0;
    static final int POSTED = 1;
    static final int WRITING = 2;
    static final int CLAIMED = 3;
    static final int REVOKING = 4;
    static final int REVOKED = 5;
    static final int FILLED = 6;

    private final AtomicInteger state = new AtomicInteger(IDLE);
    // Written by the reader before POSTED and read by the I/O thread after it saw POSTED, both under the lock.
    private ByteBuffer dst;
    private int start;
    private Thread reader;
    /** The arrival whose payload goes into {@link #dst}; set under the lock when claimed. */
    private Arrival arrival;
    /**
     * The transport's object for the reader's buffer {@link #attachedTo} ({@link ReadTarget#attach}): I/O threads
     * only, while claimed. It keeps the reader's last large buffer reachable until another replaces it.
     */
    private Object attachment;
    private ByteBuffer attachedTo;

    /**
     * Whether a reader could post {@code dst}: large enough for a message that is worth it, and writable.
     *
     * @param dst the reader's buffer
     * @return true if it may be posted
     */
    public static boolean eligible(ByteBuffer dst) {
        return dst != null && dst.remaining() >= MIN && !dst.isReadOnly();
    }

    /**
     * Whether nothing is posted or under way: a reader may post. Any thread.
     *
     * @return true when idle
     */
    public boolean idle() {
        return state.get() == IDLE;
    }

    /**
     * Whether a posted buffer waits for a message (a lock-free look before taking the lock).
     *
     * @return true when posted and not claimed
     */
    public boolean posted() {
        return state.get() == POSTED;
    }

    /**
     * Whether the I/O thread is inside a read that writes into the buffer.
     *
     * @return true while it writes
     */
    public boolean writing() {
        return state.get() == WRITING;
    }

    /**
     * Whether a whole message is in the buffer for its reader.
     *
     * @return true once filled
     */
    public boolean filled() {
        return state.get() == FILLED;
    }

    /**
     * The thread whose buffer is posted, claimed or filled.
     *
     * @return the reader, or {@code null} when idle or revoked
     */
    public Thread reader() {
        return reader;
    }

    /**
     * The reader offers {@code buffer} as it parks (under the lock; only when {@link #idle}).
     *
     * @param buffer an {@link #eligible} buffer; it is written from its position
     * @param thread the waiting reader
     */
    public void post(ByteBuffer buffer, Thread thread) {
        dst = buffer;
        start = buffer.position();
        reader = thread;
        state.set(POSTED);
    }

    /**
     * The I/O thread claims the posted buffer for {@code a}'s message (under the lock, with nothing queued ahead).
     *
     * @param a the message's arrival, prepared for {@code length} bytes
     * @param length the payload length
     * @return true if the payload now goes into the reader's buffer ({@link Arrival#target()})
     */
    public boolean claim(Arrival a, int length) {
        if (state.get() != POSTED || dst.remaining() < length) {
            return false;
        }
        arrival = a;
        a.posted = this;
        state.set(WRITING);
        return true;
    }

    /** The reader's buffer, from where the next payload byte goes; only while the I/O thread may write into it. */
    @Override
    public ByteBuffer memory() {
        return dst;
    }

    @Override
    public int bytes() {
        return start + arrival.length() - dst.position();
    }

    @Override
    public Object attachment() {
        return attachedTo == dst ? attachment : null;
    }

    @Override
    public void attach(Object attachment) {
        this.attachment = attachment;
        this.attachedTo = dst;
    }

    /**
     * The I/O thread starts a read with the message still incomplete. False if the reader revoked it: the decoder
     * then carries on into the arrival's own buffer, where the reader put the bytes so far.
     */
    boolean beginWrite() {
        while (true) {
            int s = state.get();
            if (s == REVOKING) {
                Thread.onSpinWait();                // the reader is copying a read's worth at most
            } else if (s != CLAIMED) {
                return false;
            } else if (state.compareAndSet(CLAIMED, WRITING)) {
                return true;
            }
            // Else the reader began to revoke between the read and the compare-and-set: wait for it to finish, as
            // above. Returning false now would let this thread write into the arrival the reader is still copying
            // into (and mark the buffer idle under the reader's feet).
        }
    }

    /** The I/O thread takes over a revoked message: the buffer is the reader's again. */
    void redirected(Arrival a) {
        a.posted = null;
        arrival = null;
        state.set(IDLE);
    }

    /** The I/O thread ends a read with the message still incomplete. */
    void endWrite() {
        state.compareAndSet(WRITING, CLAIMED);
    }

    /**
     * The I/O thread completed the message (under the lock): the reader finds it with {@link #takeFilled}.
     */
    public void fill() {
        state.set(FILLED);
    }

    /**
     * The I/O thread gives the buffer back unfilled (under the lock): the message was a duplicate, or its connection
     * closed mid-message, or the socket closed. The reader, if still waiting, waits on with its buffer posted.
     *
     * @param a the claimed arrival, which the caller recycles
     */
    public void unclaim(Arrival a) {
        int s;
        while ((s = state.get()) == REVOKING) {
            Thread.onSpinWait();
        }
        a.posted = null;
        if (s == REVOKED) {
            arrival = null;
            state.set(IDLE);                        // the reader left; it copied bytes that are dropped now
        } else if (s == WRITING || s == CLAIMED) {
            dst.position(start);
            arrival = null;
            state.set(POSTED);
        }
    }

    /**
     * The reader takes the whole message from its buffer (under the lock, when {@link #filled}). The buffer's
     * position is left where it was posted; the payload lies from there.
     *
     * @return the message's arrival: its source, port, time and length; its own buffer holds nothing
     */
    public Arrival takeFilled() {
        Arrival a = arrival;
        dst.position(start);
        a.posted = null;
        a.inPlace = true;
        release();
        return a;
    }

    /**
     * One step of a reader taking its buffer back before a message was taken from it (under the lock). The caller
     * repeats it while {@link #reader()} is still itself, and waits out {@link #writing} without the lock (the I/O
     * thread needs it to complete a message).
     *
     * <p>Posted: the buffer is simply withdrawn. Filled: the message is copied into its arrival's own buffer, which is
     * returned for the caller to queue ahead of everything else. Claimed (half in): the bytes so far are copied into
     * the arrival's own buffer, where the I/O thread carries on at its next read; nothing is returned.
     *
     * @return the arrival of a whole message to queue, or {@code null}
     */
    public Arrival revoke() {
        switch (state.get()) {
            case POSTED -> {
                release();
                return null;
            }
            case FILLED -> {
                Arrival a = arrival;
                a.payload.put(0, dst, start, a.length());  // absolute: position 0, limit = length, as prepared
                dst.position(start);
                a.posted = null;
                release();
                return a;
            }
            case CLAIMED -> {
                if (state.compareAndSet(CLAIMED, REVOKING)) {
                    Arrival a = arrival;
                    int n = dst.position() - start;
                    a.payload.put(0, dst, start, n).position(n);
                    dst.position(start);
                    dst = null;
                    reader = null;
                    state.set(REVOKED);
                }
                return null;                         // or the I/O thread began a read first: the caller waits
            }
            default -> {
                return null;
            }
        }
    }

    private void release() {
        dst = null;
        reader = null;
        arrival = null;
        state.set(IDLE);
    }
}
