package org.rds4j.core.conn;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import org.rds4j.core.spi.PayloadLoan;

/**
 * A zero-copy send's payload, the caller's own direct memory, lent to the transport so that it leaves with no copy in
 * user space ({@link PayloadLoan}). The caller's cookie says that rds4j no longer needs the bytes, so it is reported
 * only when both hold: the peer has the message, and the transport no longer reads them. In steady traffic the
 * transport gives the bytes back (its write is done) before the acknowledgement that frees the message is even read;
 * a write still queued on a connection that is going away, when the message was acknowledged over a newer one or
 * cancelled, reports the cookie itself when it gives the bytes back.
 *
 * <p>One per pooled message, used again for its next zero-copy send unless it is still lent then.
 */
final class ZeroCopyLoan implements PayloadLoan {
    private static final int IDLE = 0;
    private static final int LENT = 1;
    /** Lent, and the message is done with: the give-back reports the cookie. */
    private static final int DONE_WHILE_LENT = 2;
    private static final VarHandle STATE;

    static {
        try {
            STATE = MethodHandles.lookup().findVarHandle(ZeroCopyLoan.class, "state", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private ByteBuffer payload;
    /** The borrowers' view of {@link #payload}, made on the first borrow of each send's payload. */
    private ByteBuffer memory;
    private Object attachment;
    private int cookie;
    private MessageOwner owner;
    @SuppressWarnings("unused")   // through STATE
    private volatile int state;

    /** Takes the next send's payload (a view of the caller's bytes, position 0), while not lent. */
    void set(ByteBuffer payload, int cookie, MessageOwner owner) {
        if (payload != this.payload) {
            memory = null;
            attachment = null;                  // the transport's wrapper was of the previous caller's memory
        }
        this.payload = payload;
        this.cookie = cookie;
        this.owner = owner;
    }

    /** Whether the transport has the bytes: the loan may then not take another send's. */
    boolean isLent() {
        return state != IDLE;
    }

    /**
     * The message is done with (the peer has it, or it was dropped).
     *
     * @return true if the cookie may be reported now; false if the transport still reads the bytes, and reports it
     *         when it gives them back
     */
    boolean completeUnlessLent() {
        return !STATE.compareAndSet(this, LENT, DONE_WHILE_LENT);
    }

    /** Forgets the caller's memory once the cookie is reported, so that the socket's pool keeps none of it. */
    void forgetIfIdle() {
        if (state == IDLE) {
            payload = null;
            memory = null;
            attachment = null;
        }
    }

    /** Whether it still refers to a caller's memory (tests: the socket's pool must keep none after a cookie). */
    boolean holdsCallerMemory() {
        return payload != null;
    }

    @Override
    public boolean borrow() {
        return STATE.compareAndSet(this, IDLE, LENT);
    }

    @Override
    public ByteBuffer memory() {
        ByteBuffer m = memory;
        if (m == null) {
            m = payload.duplicate();            // the borrower moves its position and limit, the message's stay
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
        int c = cookie;                         // read before the store below lets a sender reuse this loan
        MessageOwner o = owner;
        if ((int) STATE.getAndSet(this, IDLE) == DONE_WHILE_LENT) {
            o.zeroCopyCompleted(c);
        }
    }
}
