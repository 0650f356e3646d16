package org.rds4j.bench;

import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;
import org.HdrHistogram.Histogram;

/**
 * Ping-pong over one endpoint pair: A sends one message and waits for B to send it back, {@code n} times; each round
 * trip's time goes into an HdrHistogram. Both sides check every message. One message in flight per pair at a time,
 * so this is latency, not throughput. A link of several pairs splits the round trips over them as
 * {@link ThroughputPhase} splits messages, every pair ping-ponging at the same time into a histogram of its own; the
 * cell merges them.
 */
final class RoundTripPhase {
    /** Round trips longer than this are recorded as this (a phase that slow fails on its deadline anyway). */
    static final long MAX_RTT_NANOS = TimeUnit.SECONDS.toNanos(60);

    private final Endpoint a;
    private final Endpoint b;
    private final int size;
    private final ByteBuffer message;
    private final ByteBuffer receivedByA;
    private final ByteBuffer receivedByB;

    RoundTripPhase(Endpoint a, Endpoint b, int size, ByteBuffer message, ByteBuffer receivedByA,
            ByteBuffer receivedByB) {
        this.a = a;
        this.b = b;
        this.size = size;
        this.message = message;
        this.receivedByA = receivedByA;
        this.receivedByB = receivedByB;
    }

    static Histogram newHistogram() {
        return new Histogram(MAX_RTT_NANOS, 3);
    }

    /** B's side: echoes messages {@code first, first + stride, ...} ({@code n} of them), checking each. */
    Void echo(long first, long n, int stride) throws Exception {
        for (long i = 0; i < n; i++) {
            int len = b.receive(receivedByB);
            Payload.check(receivedByB, len, size, first + i * stride);
            b.send(receivedByB);
            b.flush();
        }
        return null;
    }

    /** A's side: {@code n} round trips into {@code histogram} (null during warm-up); returns the elapsed nanoseconds. */
    Long ping(long first, long n, int stride, Histogram histogram) throws Exception {
        long start = System.nanoTime();
        for (long i = 0; i < n; i++) {
            long seq = first + i * stride;
            Payload.stamp(message, seq);
            long t0 = System.nanoTime();
            a.send(message);
            a.flush();
            int len = a.receive(receivedByA);
            long rtt = System.nanoTime() - t0;
            Payload.check(receivedByA, len, size, seq);
            if (histogram != null) {
                histogram.recordValue(Math.min(rtt, MAX_RTT_NANOS));
            }
        }
        return System.nanoTime() - start;
    }
}
