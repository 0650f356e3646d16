package org.rds4j.bench.contenders;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import org.rds4j.RdsDatagram;
import org.rds4j.RdsMessageInfo;
import org.rds4j.RdsSocket;
import org.rds4j.bench.Endpoint;

/**
 * One rds4j socket talking to one peer: {@code send(ByteBuffer, destination)} from the harness's reused buffer, and the
 * zero-allocation {@code receive(ByteBuffer, RdsMessageInfo, flags)} into the harness's reused buffer with one reused
 * {@link RdsMessageInfo}. A notification instead of data, a message from elsewhere, or a truncated message fails the
 * cell.
 */
final class Rds4jEndpoint implements Endpoint {
    private final RdsSocket socket;
    private final InetSocketAddress peer;
    private final RdsMessageInfo info = new RdsMessageInfo();
    /**
     * The last source object found equal to {@link #peer}. An address is immutable, so the same object again needs no
     * second comparison: the full {@code equals} was a tenth of the receiving thread's time at 64 B, a cost of this
     * harness's check that raw NIO's cells do not pay.
     */
    private InetSocketAddress checkedSource;
    /** Messages sent; written by the one thread using the endpoint, read after the phase that thread ran. */
    private long sent;

    Rds4jEndpoint(RdsSocket socket, InetSocketAddress peer) {
        this.socket = socket;
        this.peer = peer;
    }

    @Override
    public void send(ByteBuffer message) throws IOException {
        socket.send(message, peer);
        sent++;
    }

    /** How many messages this endpoint sent. */
    long sent() {
        return sent;
    }

    /** The socket this endpoint sends to. */
    InetSocketAddress peer() {
        return peer;
    }

    /** The RDS port the endpoint's socket is bound to. */
    int localPort() {
        return socket.localAddress().getPort();
    }

    @Override
    public int receive(ByteBuffer dst) throws IOException {
        dst.clear();
        socket.receive(dst, info, 0);
        if (info.kind() != RdsDatagram.Kind.DATA) {
            throw new IOException("expected a message, got a " + info.kind() + " notification");
        }
        if (info.truncated()) {
            throw new IOException("a message of " + info.length() + " bytes does not fit in " + dst.capacity());
        }
        InetSocketAddress source = info.source();
        if (source != checkedSource) {
            if (!peer.equals(source)) {
                throw new IOException("a message from " + source + ", expected only " + peer);
            }
            checkedSource = source;
        }
        dst.flip();
        return info.length();
    }
}
