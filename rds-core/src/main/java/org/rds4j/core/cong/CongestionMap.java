package org.rds4j.core.cong;

import java.nio.ByteBuffer;

/**
 * The congestion bitmap of one IP address: one bit per RDS port, set while that port's receiver holds more unread
 * bytes than its receive buffer allows. Senders test the bit of the destination port before queueing.
 *
 * <p>The layout is the kernel's, because the 8192 bytes travel verbatim in congestion-map messages: port {@code p}
 * is bit {@code p % 8} (least significant first) of byte {@code p / 8}. Port 4000 is byte 500, mask 0x01.
 *
 * <p>Thread-safe: bits are written under the map's monitor (with release stores) and {@link #isCongested} reads
 * them without it (an acquire load), as the kernel tests a bit without a lock on its send path: every send asks, so
 * it must not contend with other senders. A sender that must not miss a change (the monitor re-test) reads under the
 * monitor. The generation counter lets waiters notice any change.
 */
public final class CongestionMap {
    /** 65536 ports, one bit each. */
    public static final int BYTES = 8192;

    private final byte[] bits = new byte[BYTES];
    /** The bits as a buffer, for writing the map to a transport under the monitor without a copy of our own. */
    private final ByteBuffer wire = ByteBuffer.wrap(bits);
    private long generation;

    private static final java.lang.invoke.VarHandle BYTE =
            java.lang.invoke.MethodHandles.arrayElementVarHandle(byte[].class);

    /**
     * Whether {@code port} is marked congested. No lock.
     *
     * @param port the RDS port, 0 to 65535
     * @return true if the port's receiver is congested
     */
    public boolean isCongested(int port) {
        return (((byte) BYTE.getAcquire(bits, port >>> 3)) & (1 << (port & 7))) != 0;
    }

    /**
     * Marks {@code port} congested.
     *
     * @param port the RDS port, 0 to 65535
     * @return whether the bit changed (false if it was already set)
     */
    public synchronized boolean set(int port) {
        int mask = 1 << (port & 7);
        if ((bits[port >>> 3] & mask) != 0) {
            return false;
        }
        BYTE.setRelease(bits, port >>> 3, (byte) (bits[port >>> 3] | mask));
        changed();
        return true;
    }

    /**
     * Clears {@code port}'s congestion bit.
     *
     * @param port the RDS port, 0 to 65535
     * @return whether the bit changed (false if it was already clear)
     */
    public synchronized boolean clear(int port) {
        int mask = 1 << (port & 7);
        if ((bits[port >>> 3] & mask) == 0) {
            return false;
        }
        BYTE.setRelease(bits, port >>> 3, (byte) (bits[port >>> 3] & ~mask));
        changed();
        return true;
    }

    /**
     * Replaces the whole map with the 8192 bytes of a received congestion-map message.
     *
     * @param wire the message's payload, exactly 8192 bytes remaining; its position is left unchanged
     * @return whether any bit changed (a copy of the map already held, as every path of a connection carries one,
     *         changes nothing and wakes nobody)
     * @throws IllegalArgumentException if {@code wire} does not hold exactly 8192 bytes
     */
    public synchronized boolean replace(ByteBuffer wire) {
        if (wire.remaining() != BYTES) {
            throw new IllegalArgumentException("a congestion map is " + BYTES + " bytes, not " + wire.remaining());
        }
        if (wire.mismatch(this.wire.clear()) < 0) {
            return false;
        }
        wire.get(wire.position(), bits);   // absolute: no view per map. A lock-free reader may see old bits a moment
        changed();
        return true;
    }

    /**
     * Copies the map's 8192 bytes, as they go on the wire, into {@code dst}.
     *
     * @param dst at least 8192 bytes; the map goes at its start
     */
    public synchronized void copyTo(byte[] dst) {
        System.arraycopy(bits, 0, dst, 0, BYTES);
    }

    /**
     * Hands the map's 8192 bytes, as they go on the wire, to {@code writer} under the map's monitor, so that no bit
     * changes while the writer copies them. The buffer is valid only during the call.
     *
     * @param writer takes the bytes (position 0, limit 8192) and copies what it needs before returning
     */
    public synchronized void writeTo(java.util.function.Consumer<ByteBuffer> writer) {
        writer.accept(wire.clear());
    }

    /**
     * A counter that moves on every change; waiters compare it to see that something happened.
     *
     * @return the number of changes so far
     */
    public synchronized long generation() {
        return generation;
    }

    /**
     * Waits until {@code port} is clear or {@code timeoutNanos} pass.
     *
     * @param port the RDS port, 0 to 65535
     * @param timeoutNanos how long to wait at most, in nanoseconds
     * @return whether the port is clear
     * @throws InterruptedException if the thread is interrupted while waiting
     */
    public synchronized boolean awaitClear(int port, long timeoutNanos) throws InterruptedException {
        long deadline = System.nanoTime() + timeoutNanos;
        while (isCongested(port)) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return false;
            }
            wait(Math.max(1, left / 1_000_000), 0);
        }
        return true;
    }

    private void changed() {
        generation++;
        notifyAll();
    }

    /**
     * The congested ports, for logs and tests.
     *
     * @return the congested RDS ports in ascending order, empty if none
     */
    public synchronized int[] congestedPorts() {
        int n = 0;
        for (byte b : bits) {
            n += Integer.bitCount(b & 0xFF);
        }
        int[] ports = new int[n];
        int k = 0;
        for (int i = 0; i < BYTES && k < n; i++) {
            int b = bits[i] & 0xFF;
            for (int bit = 0; b != 0 && bit < 8; bit++) {
                if ((b & (1 << bit)) != 0) {
                    ports[k++] = i * 8 + bit;
                }
            }
        }
        return ports;
    }
}
