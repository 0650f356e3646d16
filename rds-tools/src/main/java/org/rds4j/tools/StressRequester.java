package org.rds4j.tools;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import org.rds4j.EbadfException;
import org.rds4j.RdsDatagram;
import org.rds4j.RdsMessageInfo;
import org.rds4j.RdsSocket;

/**
 * One requesting socket of the stress test: keeps up to {@code depth} pattern messages outstanding towards its
 * echoing peer, and checks that each echo is the oldest outstanding message, intact, from the right peer.
 *
 * <p>The hot loop allocates nothing: one reused send buffer, one reused receive buffer ({@code receive(ByteBuffer,
 * RdsMessageInfo, flags)}), and send times in a ring indexed by sequence number
 * (echoes return in order, so the ring slot of the oldest outstanding message is always still valid).
 */
final class StressRequester implements Runnable {
    private final RdsSocket socket;
    private final InetSocketAddress peer;
    private final int depth;
    private final int size;
    private final StressStats stats;
    private final ByteBuffer buffer;
    private final ByteBuffer echoBuffer;
    private final RdsMessageInfo info = new RdsMessageInfo();
    private final long[] sentAt;
    private volatile boolean sending = true;
    private volatile boolean finished;

    StressRequester(RdsSocket socket, InetSocketAddress peer, int depth, int size, StressStats stats) {
        this.socket = socket;
        this.peer = peer;
        this.depth = depth;
        this.size = size;
        this.stats = stats;
        this.buffer = ByteBuffer.allocate(size);
        this.echoBuffer = ByteBuffer.allocateDirect(Math.max(size, 1));
        this.sentAt = new long[depth];
    }

    /** Stops sending new requests; the worker still waits for the outstanding echoes, then ends. */
    void stopSending() {
        sending = false;
    }

    /** Whether every outstanding echo came back (or the worker failed). */
    boolean finished() {
        return finished;
    }

    @Override
    public void run() {
        long nextSend = 0;
        long nextEcho = 0;
        try {
            while (true) {
                while (sending && nextSend - nextEcho < depth) {
                    buffer.clear();
                    PayloadPattern.fill(buffer, nextSend, size);
                    buffer.flip();
                    sentAt[(int) (nextSend % depth)] = System.nanoTime();
                    socket.send(buffer, peer);
                    nextSend++;
                }
                if (nextEcho == nextSend) {
                    return;
                }
                echoBuffer.clear();
                int got = socket.receive(echoBuffer, info, 0);
                long now = System.nanoTime();
                echoBuffer.flip();
                if (!check(got, nextEcho)) {
                    return;
                }
                stats.delivered(got);
                stats.roundTrip(now - sentAt[(int) (nextEcho % depth)]);
                nextEcho++;
            }
        } catch (EbadfException closed) {
            // Closed by the coordinator because echoes stopped coming: whatever is outstanding is lost.
            stats.error(Endpoints.format(socket.localAddress()) + ": " + (nextSend - nextEcho)
                    + " echoes never came back (first missing: message " + nextEcho + ")");
        } catch (IOException | RuntimeException e) {
            stats.error(Endpoints.format(socket.localAddress()) + ": " + e);
        } finally {
            finished = true;
        }
    }

    private boolean check(int got, long expected) {
        if (info.kind() != RdsDatagram.Kind.DATA || !info.source().equals(peer)) {
            stats.error(Endpoints.format(socket.localAddress()) + ": unexpected " + info.kind() + " from "
                    + (info.source() == null ? "the stack" : Endpoints.format(info.source()))
                    + ", expected echoes from " + Endpoints.format(peer));
            return false;
        }
        long claimed = PayloadPattern.claimedSequence(echoBuffer);
        if (info.length() != size || info.truncated() || got != size
                || !PayloadPattern.matches(claimed, expected, size)) {
            stats.error(Endpoints.format(socket.localAddress()) + ": expected echo of message " + expected + " ("
                    + size + " bytes), got " + describe(claimed, info.length()));
            return false;
        }
        return true;
    }

    static String describe(long claimed, int length) {
        return (claimed == PayloadPattern.CORRUPT ? "a corrupt message" : "message " + claimed) + " (" + length
                + " bytes)";
    }
}
