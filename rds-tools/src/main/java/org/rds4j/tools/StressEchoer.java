package org.rds4j.tools;

import java.io.IOException;
import java.net.InetSocketAddress;
import org.rds4j.EbadfException;
import org.rds4j.RdsDatagram;
import org.rds4j.RdsSocket;

/**
 * One echoing socket of the stress test: checks that each request is the next one from its requester, then sends
 * the received payload straight back (the read-only payload buffer is sent as is, no copy). Runs until its socket
 * is closed.
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
        long expected = 0;
        try {
            while (true) {
                RdsDatagram request = socket.receive();
                if (!request.source().equals(requester)) {
                    stats.error(Endpoints.format(socket.localAddress()) + ": unexpected message from "
                            + Endpoints.format(request.source()));
                    return;
                }
                long claimed = PayloadPattern.claimedSequence(request.payload());
                if (request.length() != size || !PayloadPattern.matches(claimed, expected, size)) {
                    stats.error(Endpoints.format(socket.localAddress()) + ": expected message " + expected + " ("
                            + size + " bytes), got " + StressRequester.describe(claimed, request.length()));
                    return;
                }
                stats.delivered(request.length());
                socket.send(request.payload(), request.source());
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
