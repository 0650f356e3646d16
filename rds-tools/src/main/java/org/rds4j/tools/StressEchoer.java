package org.rds4j.tools;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import org.rds4j.EbadfException;
import org.rds4j.RdsDatagram;
import org.rds4j.RdsMessageInfo;
import org.rds4j.RdsSocket;

/**
 * One echoing socket of the stress test: checks that each request is the next one from its requester, then sends
 * it straight back. Receives into one reused buffer ({@code receive(ByteBuffer, RdsMessageInfo, flags)}) and sends
 * from it, so the loop allocates nothing. Runs until its socket is closed.
 */
final class StressEchoer implements Runnable {
    private final RdsSocket socket;
    private final InetSocketAddress requester;
    private final int size;
    private final StressStats stats;

    StressEchoer(RdsSocket socket, InetSocketAddress requester, int size, StressStats stats) {
        this.socket = socket;
        this.requester = requester;
        this.size = size;
        this.stats = stats;
    }

    @Override
    public void run() {
        ByteBuffer buffer = ByteBuffer.allocateDirect(Math.max(size, 1));
        RdsMessageInfo info = new RdsMessageInfo();
        long expected = 0;
        try {
            while (true) {
                buffer.clear();
                int got = socket.receive(buffer, info, 0);
                buffer.flip();
                if (info.kind() != RdsDatagram.Kind.DATA || !info.source().equals(requester)) {
                    stats.error(Endpoints.format(socket.localAddress()) + ": unexpected " + info.kind() + " from "
                            + (info.source() == null ? "the stack" : Endpoints.format(info.source())));
                    return;
                }
                long claimed = PayloadPattern.claimedSequence(buffer);
                if (info.length() != size || info.truncated() || got != size
                        || !PayloadPattern.matches(claimed, expected, size)) {
                    stats.error(Endpoints.format(socket.localAddress()) + ": expected message " + expected + " ("
                            + size + " bytes), got " + StressRequester.describe(claimed, info.length()));
                    return;
                }
                stats.delivered(got);
                socket.send(buffer, requester);
                expected++;
            }
        } catch (EbadfException closed) {
            // The coordinator closes echo sockets once every requester is done: the normal end.
        } catch (IOException | RuntimeException e) {
            if (socket.isOpen()) {
                stats.error(Endpoints.format(socket.localAddress()) + ": " + e);
            }
        }
    }
}
