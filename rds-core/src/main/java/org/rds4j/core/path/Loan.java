package org.rds4j.core.path;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import org.rds4j.core.spi.PayloadLoan;

/**
 * What every payload lent to a transport keeps ({@link PayloadLoan}): a state word that admits one borrower at a time,
 * the borrowers' view of the lent memory, made by the first one, and what they attached to it. The view and the
 * attachment are handed from borrower to borrower through the state word.
 */
abstract class Loan implements PayloadLoan {
    /** Not lent: the message's side may change or reuse the bytes. */
    static final int IDLE = 0;
    /** Lent: only the borrower reads the bytes, and nobody writes them. */
    static final int LENT = 1;

    private static final VarHandle STATE;

    static {
        try {
            STATE = MethodHandles.lookup().findVarHandle(Loan.class, "state", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private ByteBuffer memory;
    private Object attachment;
    @SuppressWarnings("unused")   // through STATE
    private volatile int state;

    /** The buffer whose whole memory is lent (position 0 to its capacity). */
    abstract ByteBuffer lentBuffer();

    /** Whether a transport has the bytes and has not given them back: then nobody may write them. */
    final boolean isLent() {
        return state != IDLE;
    }

    /** Moves the state from {@code from} to {@code to}, if it is {@code from}. */
    final boolean changeState(int from, int to) {
        return STATE.compareAndSet(this, from, to);
    }

    /**
     * Ends a loan: a volatile store, so the borrower's last read of the bytes comes before a sender's refill.
     *
     * @return the state it ended in
     */
    final int endLoan() {
        return (int) STATE.getAndSet(this, IDLE);
    }

    /** Forgets the view and the attachment: the lent buffer is another one now, or none. */
    final void forgetMemory() {
        memory = null;
        attachment = null;
    }

    @Override
    public final boolean borrow() {
        return changeState(IDLE, LENT);
    }

    @Override
    public final ByteBuffer memory() {
        ByteBuffer m = memory;
        if (m == null) {
            m = lentBuffer().duplicate().clear();   // the borrower moves its position and limit, the message's stay
            memory = m;
        }
        return m;
    }

    @Override
    public final Object attachment() {
        return attachment;
    }

    @Override
    public final void attach(Object attachment) {
        this.attachment = attachment;
    }
}
