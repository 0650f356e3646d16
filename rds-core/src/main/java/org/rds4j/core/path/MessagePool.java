package org.rds4j.core.path;

/**
 * A socket's spare messages, with their buffers. Senders take one per send; the I/O thread gives back a whole
 * acknowledgement batch at once, already linked through {@link OutgoingMessage#next}: one lock per send on the
 * sender's side and one per batch on the I/O thread's, so the two meet on the lock's cache line once per batch
 * rather than per message (a lock-free pool costs an atomic on a shared line for every message, on both sides).
 *
 * <p>It holds at most what the socket once had out at the same time (its send budget's worth), up to a cap.
 */
public final class MessagePool {
    private static final int MAX = 1 << 16;

    private OutgoingMessage top;
    private int size;

    /**
     * A spare message, or a new one.
     *
     * @return an empty message for {@link OutgoingMessage#fill} to make a data message
     */
    public OutgoingMessage take() {
        synchronized (this) {
            OutgoingMessage m = top;
            if (m != null) {
                top = m.next;
                m.next = null;
                size--;
                return m;
            }
        }
        return new OutgoingMessage();
    }

    /**
     * Takes back one message.
     *
     * @param m the message, which the caller must no longer use
     */
    public void giveBack(OutgoingMessage m) {
        m.next = null;
        giveBack(m, m, 1);
    }

    /**
     * Takes back {@code count} messages linked from {@code first} to {@code last}. Past the cap they are dropped.
     *
     * @param first the first message of the chain
     * @param last the last, whose link is overwritten
     * @param count how many messages the chain holds
     */
    public void giveBack(OutgoingMessage first, OutgoingMessage last, int count) {
        synchronized (this) {
            if (size + count > MAX) {
                return;                      // the garbage collector takes them
            }
            last.next = top;
            top = first;
            size += count;
        }
    }
}
