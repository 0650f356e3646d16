package org.rds4j.bench.contenders;

import java.io.IOException;
import java.nio.ByteBuffer;
import org.rds4j.bench.Endpoint;

/**
 * One end of a {@link HandoffNioContender} link, as the application sees it: a send copies the message into the
 * outgoing ring, a receive copies the oldest message out of the incoming ring. The channel belongs to the side's
 * {@link HandoffIoThread}. Nothing here allocates.
 */
final class HandoffEndpoint implements Endpoint {
    private final HandoffRing outgoing;
    private final HandoffRing incoming;
    private final HandoffLinkState state;
    private HandoffIoThread io;

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
    }

    @Override
    public int receive(ByteBuffer dst) throws IOException {
        ByteBuffer m = incoming.take(state);
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
}
