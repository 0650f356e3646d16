package org.rds4j.core.path;

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
final class ZeroCopyLoan extends Loan {
    /** Lent, and the message is done with: the give-back reports the cookie. */
    private static final int DONE_WHILE_LENT = 2;

    private ByteBuffer payload;
    private int cookie;
    private MessageOwner owner;

    /** Takes the next send's payload (a view of the caller's bytes, position 0), while not lent. */
    void set(ByteBuffer payload, int cookie, MessageOwner owner) {
        if (payload != this.payload) {
            forgetMemory();                     // the transport's wrapper was of the previous caller's memory
        }
        this.payload = payload;
        this.cookie = cookie;
        this.owner = owner;
    }

    /**
     * The message is done with (the peer has it, or it was dropped).
     *
     * @return true if the cookie may be reported now; false if the transport still reads the bytes, and reports it
     *         when it gives them back
     */
    boolean completeUnlessLent() {
        return !changeState(LENT, DONE_WHILE_LENT);
    }

    /** Forgets the caller's memory once the cookie is reported, so that the socket's pool keeps none of it. */
    void forgetIfIdle() {
        if (!isLent()) {
            payload = null;
            forgetMemory();
        }
    }

    /** Whether it still refers to a caller's memory (tests: the socket's pool must keep none after a cookie). */
    boolean holdsCallerMemory() {
        return payload != null;
    }

    @Override
    ByteBuffer lentBuffer() {
        return payload;
    }

    @Override
    public void giveBack() {
        int c = cookie;                         // read before the loan ends and lets a sender reuse it
        MessageOwner o = owner;
        if (endLoan() == DONE_WHILE_LENT) {
            o.zeroCopyCompleted(c);
        }
    }
}
