package org.rds4j.core.socket;

import java.nio.ByteBuffer;
import org.rds4j.core.path.MessageOwner;
import org.rds4j.core.path.MessagePool;
import org.rds4j.core.path.OutgoingMessage;
import org.rds4j.core.path.SendTarget;

/**
 * A socket's small sends, carried as runs (docs/decisions/0008-small-sends-travel-in-runs.md): while the socket's last small message to
 * a port still waits in its path's inbox, the next one to the same port is appended to it rather than queued as a
 * message object of its own. On the wire nothing changes: each message keeps its own header and sequence number.
 * What changes is the cost per message on both threads: the sender copies into a buffer it already holds instead of
 * taking, filling and pushing a pooled message, and the path takes in, numbers, keeps and releases one object per run.
 *
 * <p>Used only when the send can go at once: not zero-copy, at most {@code MessageRun.ENTRY_MAX} bytes, the peer's port
 * not congested, and budget free without waiting; anything else goes the ordinary way, which copies before it waits.
 * One sender at a time appends (a try-lock: a second thread sending on the socket meanwhile queues its message on its
 * own). A run's buffer starts at the size of its first message and doubles, up to {@code MessageRun.MAX_BYTES}, each
 * time a run filled while still open, and halves each time a run starts for another port or peer than the last: a
 * socket that sends one message at a time, or spreads them over destinations, keeps buffers of about one message
 * (its pool holds a buffer per message in flight), and one that streams to one port gets runs of up to 64.
 */
final class SendCoalescer {
    private static final int MIN_CAPACITY = 64;
    /**
     * The run last queued, which the next small send to the same place may join; the rest is the appending sender's,
     * under {@link #busy}. Volatile because a send that goes the ordinary way clears it ({@link #sendOrdinary}).
     */
    private volatile OutgoingMessage open;
    private SendTarget openConnection;
    private int openLanes;
    /** The buffer size of the next run. */
    private int capacity = MIN_CAPACITY;
    /** One sender at a time appends; the rest send the ordinary way. */
    private final TryLock busy = new TryLock();

    /**
     * Sends {@code payload} as part of a run if it can go at once.
     *
     * @param budget the socket's send budget, from which this takes room without waiting
     * @return false if the caller must send it the ordinary way (nothing was taken or queued); true if it is queued
     *         and {@code payload}'s bytes consumed
     */
    boolean trySend(ByteBuffer payload, SendTarget c, int sourcePort, int destinationPort, SendBuffer budget,
                    MessagePool pool, MessageOwner owner) {
        int len = payload.remaining();
        if (len > OutgoingMessage.RUN_ENTRY_MAX || c.peerMap().isCongested(destinationPort)
                || !busy.tryLock()) {
            return false;
        }
        try {
            int ask = budget.tryReserve(len);
            if (ask < 0) {
                return false;                            // the ordinary way copies first, then waits
            }
            OutgoingMessage r = open;
            int lanes = c.lanes();
            boolean samePlace = r != null && openConnection == c && r.destinationPort() == destinationPort;
            if (samePlace && openLanes == lanes) {
                int appended = r.append(payload, ask > 0);
                if (appended == OutgoingMessage.APPENDED) {
                    payload.position(payload.limit());
                    c.queued(sourcePort, lanes);         // lanes opened meanwhile: path 0's catch-up must count it
                    return true;
                }
                if (appended == OutgoingMessage.RUN_FULL && capacity < OutgoingMessage.RUN_MAX_BYTES) {
                    capacity <<= 1;                      // it filled before the path took it: runs may carry more
                }
            }
            if (r != null && !samePlace && capacity > MIN_CAPACITY) {
                capacity >>= 1;                          // messages spread over ports or peers: runs stay short
            }
            OutgoingMessage m = pool.take();
            m.fillRun(sourcePort, destinationPort, payload, owner, Math.max(capacity, len));
            m.askForAck(ask > 0);
            open = m;
            openConnection = c;
            openLanes = lanes;
            payload.position(payload.limit());
            c.enqueue(sourcePort, m);
            return true;
        } finally {
            busy.unlock();
        }
    }

    /**
     * Queues a message of the socket that goes the ordinary way (not {@link #trySend}). A later message must not join
     * a run queued before it, or it would overtake it: the open run is cleared after the message's push, so that a
     * run another thread queues meanwhile is either cleared here or queued after the message (then joining it keeps
     * the order).
     */
    void sendOrdinary(SendTarget c, int sourcePort, OutgoingMessage m) {
        c.enqueue(sourcePort, m);
        if (open != null) {
            open = null;
        }
    }
}
