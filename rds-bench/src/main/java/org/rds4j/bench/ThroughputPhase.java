package org.rds4j.bench;

import java.nio.ByteBuffer;

/**
 * One-way throughput with delivery included: A sends {@code n} messages, B receives and checks each one (length and
 * sequence number), then sends an 8-byte acknowledgement carrying {@code n}; the phase's time runs from A's first send
 * to A's receipt of that acknowledgement, so nothing still in flight is counted as delivered.
 */
final class ThroughputPhase {
    static final int ACK_SIZE = Long.BYTES;

    private final Link link;
    private final int size;
    private final ByteBuffer message;
    private final ByteBuffer receivedByA;
    private final ByteBuffer receivedByB;
    private final ByteBuffer ack = ByteBuffer.allocateDirect(ACK_SIZE);

    ThroughputPhase(Link link, int size, ByteBuffer message, ByteBuffer receivedByA, ByteBuffer receivedByB) {
        this.link = link;
        this.size = size;
        this.message = message;
        this.receivedByA = receivedByA;
        this.receivedByB = receivedByB;
    }

    /** B's side: receives and checks messages {@code first .. first+n-1}, then acknowledges. */
    Void receive(long first, long n) throws Exception {
        Endpoint b = link.b();
        for (long i = 0; i < n; i++) {
            int len = b.receive(receivedByB);
            Payload.check(receivedByB, len, size, first + i);
        }
        ack.clear();
        ack.putLong(0, n);
        b.send(ack);
        b.flush();
        return null;
    }

    /** A's side: sends the messages, waits for the acknowledgement; returns the elapsed nanoseconds. */
    Long send(long first, long n) throws Exception {
        Endpoint a = link.a();
        long t0 = System.nanoTime();
        for (long i = 0; i < n; i++) {
            Payload.stamp(message, first + i);
            a.send(message);
        }
        a.flush();
        int len = a.receive(receivedByA);
        long elapsed = System.nanoTime() - t0;
        if (len != ACK_SIZE || receivedByA.getLong(0) != n) {
            throw new Payload.MismatchException("expected an acknowledgement of " + n + " messages, got " + len
                    + " bytes" + (len >= ACK_SIZE ? " saying " + receivedByA.getLong(0) : ""));
        }
        return elapsed;
    }
}
