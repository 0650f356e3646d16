package org.rds4j.bench;

import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;
import org.HdrHistogram.Histogram;

/**
 * Ping-pong: A sends one message and waits for B to send it back, {@code n} times; each round trip's time goes into
 * an HdrHistogram. Both sides check every message. One message in flight at a time, so this is latency, not
 * throughput.
 */
final class RoundTripPhase {
    /** Round trips longer than this are recorded as this (a phase that slow fails on its deadline anyway). */
    static final long MAX_RTT_NANOS = TimeUnit.SECONDS.toNanos(60);

    private final Link link;
    private final int size;
    private final ByteBuffer message;
    private final ByteBuffer receivedByA;
    private final ByteBuffer receivedByB;

    RoundTripPhase(Link link, int size, ByteBuffer message, ByteBuffer receivedByA, ByteBuffer receivedByB) {
        this.link = link;
        this.size = size;
        this.message = message;
        this.receivedByA = receivedByA;
        this.receivedByB = receivedByB;
    }

    static Histogram newHistogram() {
        return new Histogram(MAX_RTT_NANOS, 3);
    }

    /** B's side: echoes messages {@code first .. first+n-1}, checking each. */
    Void echo(long first, long n) throws Exception {
        Endpoint b = link.b();
        for (long i = 0; i < n; i++) {
            int len = b.receive(receivedByB);
            Payload.check(receivedByB, len, size, first + i);
            b.send(receivedByB);
            b.flush();
        }
        return null;
    }

    /** A's side: {@code n} round trips into {@code histogram} (null during warm-up); returns the elapsed nanoseconds. */
    Long ping(long first, long n, Histogram histogram) throws Exception {
        Endpoint a = link.a();
        long start = System.nanoTime();
        for (long i = 0; i < n; i++) {
            Payload.stamp(message, first + i);
            long t0 = System.nanoTime();
            a.send(message);
            a.flush();
            int len = a.receive(receivedByA);
            long rtt = System.nanoTime() - t0;
            Payload.check(receivedByA, len, size, first + i);
            if (histogram != null) {
                histogram.recordValue(Math.min(rtt, MAX_RTT_NANOS));
            }
        }
        return System.nanoTime() - start;
    }
}
