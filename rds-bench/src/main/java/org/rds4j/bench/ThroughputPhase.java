package org.rds4j.bench;

import java.nio.ByteBuffer;

/**
 * One-way throughput with delivery included, over one endpoint pair: A sends its messages, B receives and checks each
 * one (length and sequence number), then sends an 8-byte acknowledgement carrying their count; the pair's time runs
 * from A's first send to A's receipt of that acknowledgement, so nothing still in flight is counted as delivered.
 *
 * <p>A link of several pairs splits a phase's {@code n} messages over them: pair {@code p} of {@code P} carries
 * messages {@code first + p}, {@code first + p + P}, ... in that order, so each receiver still checks one ordered
 * stream. The phase's time is then from the earliest pair's first send to the last pair's acknowledgement.
 */
final class ThroughputPhase {
    static final int ACK_SIZE = Long.BYTES;

    /** When one pair's part of a phase started and ended, {@link System#nanoTime()}. */
    record Span(long start, long end) {
        /** From the earliest start to the latest end of {@code spans}. */
        static long elapsed(Iterable<Span> spans) {
            long start = Long.MAX_VALUE;
            long end = Long.MIN_VALUE;
            for (Span s : spans) {
                start = Math.min(start, s.start);
                end = Math.max(end, s.end);
            }
            return end - start;
        }
    }

    private final Endpoint a;
    private final Endpoint b;
    private final int size;
    private final ByteBuffer message;
    private final ByteBuffer receivedByA;
    private final ByteBuffer receivedByB;
    private final ByteBuffer ack = ByteBuffer.allocateDirect(ACK_SIZE);

    ThroughputPhase(Endpoint a, Endpoint b, int size, ByteBuffer message, ByteBuffer receivedByA,
            ByteBuffer receivedByB) {
        this.a = a;
        this.b = b;
        this.size = size;
        this.message = message;
        this.receivedByA = receivedByA;
        this.receivedByB = receivedByB;
    }

    /** How many of a phase's {@code n} messages pair {@code pair} of {@code pairs} carries. */
    static long share(long n, int pair, int pairs) {
        return n <= pair ? 0 : (n - pair + pairs - 1) / pairs;
    }

    /** B's side: receives and checks messages {@code first, first + stride, ...} ({@code n} of them), then acks. */
    Void receive(long first, long n, int stride) throws Exception {
        for (long i = 0; i < n; i++) {
            int len = b.receive(receivedByB);
            Payload.check(receivedByB, len, size, first + i * stride);
        }
        ack.clear();
        ack.putLong(0, n);
        b.send(ack);
        b.flush();
        return null;
    }

    /** A's side: sends the messages, waits for the acknowledgement; returns when it started and ended. */
    Span send(long first, long n, int stride) throws Exception {
        long t0 = System.nanoTime();
        for (long i = 0; i < n; i++) {
            Payload.stamp(message, first + i * stride);
            a.send(message);
        }
        a.flush();
        int len = a.receive(receivedByA);
        long t1 = System.nanoTime();
        if (len != ACK_SIZE || receivedByA.getLong(0) != n) {
            throw new Payload.MismatchException("expected an acknowledgement of " + n + " messages, got " + len
                    + " bytes" + (len >= ACK_SIZE ? " saying " + receivedByA.getLong(0) : ""));
        }
        return new Span(t0, t1);
    }
}
