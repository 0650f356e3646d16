package org.rds4j.bench.contenders;

import java.io.IOException;
import java.nio.ByteBuffer;
import org.rds4j.bench.Endpoint;

/**
 * One end of a {@link HandoffNioContender} link, as the application sees it: a send copies the message into the
 * outgoing ring, a receive copies the oldest message out of the incoming ring. The channel belongs to the side's
 * {@link HandoffIoThread}. Nothing here allocates.
 *
 * <p>A receive waits as rds4j's default mode does (its {@code ReplySpin}, {@code RdsStackConfig.replySpin}): the
 * first wait after a send yields for up to {@link #REPLY_SPIN_NANOS} before it parks, while the waits for replies
 * took no longer than that on average (smoothed by a quarter per wait); any other wait parks at once.
 */
final class HandoffEndpoint implements Endpoint {
    /** rds4j's default {@code RdsStackConfig.replySpin}. */
    static final long REPLY_SPIN_NANOS = 200_000;

    private final HandoffRing outgoing;
    private final HandoffRing incoming;
    private final HandoffLinkState state;
    private HandoffIoThread io;
    private boolean sentSinceWait;
    private long replyNanos;

    HandoffEndpoint(HandoffRing outgoing, HandoffRing incoming, HandoffLinkState state) {
        this.outgoing = outgoing;
        this.incoming = incoming;
        this.state = state;
    }

    void io(HandoffIoThread io) {
        this.io = io;
    }

    @Override
    public void send(ByteBuffer message) throws IOException {
        ByteBuffer slot = outgoing.claim(state);
        if (message.remaining() > slot.capacity()) {
            throw new IOException("a message of " + message.remaining() + " bytes does not fit in a slot of "
                    + slot.capacity());
        }
        slot.put(message);
        outgoing.publish();
        io.wakeIfSleeping();
        sentSinceWait = true;
    }

    @Override
    public int receive(ByteBuffer dst) throws IOException {
        ByteBuffer m = incoming.peek();
        if (m == null) {
            m = awaitMessage();
        }
        int len = m.remaining();
        if (len > dst.capacity()) {
            throw new IOException("a message of " + len + " bytes does not fit in " + dst.capacity());
        }
        dst.clear();
        dst.put(m);
        dst.flip();
        // No wakeProducer: the I/O thread never parks on a full incoming ring, it yields (HandoffIoThread.run).
        incoming.free();
        return len;
    }

    private ByteBuffer awaitMessage() throws IOException {
        boolean reply = sentSinceWait && !incoming.spins();
        sentSinceWait = false;
        if (!reply) {
            return incoming.take(state);
        }
        long start = System.nanoTime();
        ByteBuffer m = replyNanos <= REPLY_SPIN_NANOS ? incoming.pollUntil(start + REPLY_SPIN_NANOS, state) : null;
        if (m == null) {
            m = incoming.take(state);
        }
        replyNanos += (System.nanoTime() - start - replyNanos) >> 2;
        return m;
    }
}
