package org.rds4j.core.conn;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import org.rds4j.core.spi.PayloadLoan;

/**
 * A pooled message's own payload buffer. From {@value #DIRECT_MIN} bytes it is direct memory, which a transport
 * writing to an operating-system socket can hand to the kernel as it is, so the core lends it
 * ({@link PayloadLoan}) instead of having it copied into the transport's batches: at 1 MiB that copy took 12 % of the
 * sending TCP I/O thread's CPU (docs/threading.md, session 14). Smaller payloads stay on the heap: copied into a batch
 * with the frames around them, they leave in one piece of a gathering write instead of three.
 *
 * <p>The sending thread fills it, and only when it is not out on loan ({@link OutgoingMessage#fill} takes a new
 * buffer otherwise); the borrower reads it between {@link #borrow()} and {@link #giveBack()}.
 */
final class MessageBuffer implements PayloadLoan {
    /** The smallest capacity kept in direct memory: a whole transport batch's worth (32 KiB). */
    static final int DIRECT_MIN = 32 * 1024;

    private static final VarHandle LENT;

    static {
        try {
            LENT = MethodHandles.lookup().findVarHandle(MessageBuffer.class, "lent", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    final ByteBuffer bytes;
    /**
     * The borrowers' view and what they attached, made by the first one and handed from borrower to borrower
     * through {@link #lent}.
     */
    private ByteBuffer memory;
    private Object attachment;
    @SuppressWarnings("unused")   // through LENT
    private volatile int lent;

    MessageBuffer(int capacity) {
        this.bytes = capacity >= DIRECT_MIN ? ByteBuffer.allocateDirect(capacity) : ByteBuffer.allocate(capacity);
    }

    /** Whether a transport may borrow it: direct memory only. */
    boolean lendable() {
        return bytes.isDirect();
    }

    /** Whether a transport has it and has not given it back: then nobody may write it. */
    boolean isLent() {
        return lent != 0;
    }

    @Override
    public boolean borrow() {
        return LENT.compareAndSet(this, 0, 1);
    }

    @Override
    public ByteBuffer memory() {
        ByteBuffer m = memory;
        if (m == null) {
            m = bytes.duplicate().clear();
            memory = m;
        }
        return m;
    }

    @Override
    public Object attachment() {
        return attachment;
    }

    @Override
    public void attach(Object attachment) {
        this.attachment = attachment;
    }

    @Override
    public void giveBack() {
        lent = 0;          // a release store: the borrower's last read of the bytes comes before a sender's refill
    }
}
