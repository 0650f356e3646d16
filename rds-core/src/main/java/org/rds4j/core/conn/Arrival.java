package org.rds4j.core.conn;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import org.rds4j.RdsDatagram;

/**
 * A received message waiting on a socket: where it came from, where it went, when, and its payload. Reused: the
 * receiving socket keeps a pool of them with their buffers, the I/O thread fills one straight from the network
 * buffer, and the application's {@code receive} copies it out and gives it back. One owner at a time.
 */
public final class Arrival {
    InetSocketAddress source;
    int port;
    long arrivalNanos;
    /** Position 0, limit = length once filled. */
    ByteBuffer payload;
    /** The link in a delivery batch and in the socket's receive queue. */
    Arrival next;
    /** For a notification (a send failure, a congestion update) instead of data: what to report; rare, not pooled. */
    RdsDatagram notification;

    /** A notification to return from {@code receive()} ahead of data. */
    public static Arrival notification(RdsDatagram d) {
        Arrival a = new Arrival();
        a.notification = d;
        return a;
    }

    public RdsDatagram notification() {
        return notification;
    }

    /** Prepares this arrival for a payload of {@code length} bytes: position 0, limit {@code length}. */
    public ByteBuffer prepare(int length) {
        ByteBuffer p = payload;
        if (p == null || p.capacity() < length) {
            p = ByteBuffer.allocate(OutgoingMessage.capacityFor(length));
            payload = p;
        }
        p.clear().limit(length);
        return p;
    }

    public InetSocketAddress source() {
        return source;
    }

    public int port() {
        return port;
    }

    public long arrivalNanos() {
        return arrivalNanos;
    }

    /** The payload: position 0, limit = length. */
    public ByteBuffer payload() {
        return payload;
    }

    public int length() {
        return payload.limit();
    }

    public Arrival next() {
        return next;
    }

    public void next(Arrival n) {
        this.next = n;
    }

    /** Sets where the message came from and when; the payload was filled by {@link #prepare}. */
    public Arrival set(InetSocketAddress source, int port, long arrivalNanos) {
        this.source = source;
        this.port = port;
        this.arrivalNanos = arrivalNanos;
        return this;
    }

    /** The capacity of the arrival's buffer, 0 if it has none. */
    public int bufferCapacity() {
        return payload == null ? 0 : payload.capacity();
    }

}
