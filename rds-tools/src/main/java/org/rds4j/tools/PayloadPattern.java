package org.rds4j.tools;

import java.nio.ByteBuffer;

/**
 * The payload every rds4j tool sends, shared byte for byte with the kernel-side test agent so that either end can
 * check the other: message {@code k} (counting from 0 per sending socket) of size {@code s} carries {@code k} as a
 * big-endian 64-bit integer in its first {@code min(8, s)} bytes (the low-order bytes of that integer when
 * {@code s < 8}), and every byte at offset {@code i >= 8} equals {@code (k + i) mod 251}.
 *
 * <p>251 is prime and not a power of two, so a shifted, truncated or stale buffer fails the check, unlike a plain
 * counter byte. Nothing here allocates: the stress loop fills and checks millions of messages per run.
 */
public final class PayloadPattern {
    /** {@link #claimedSequence} of a payload whose body does not match its header. */
    public static final long CORRUPT = -1;

    private static final int MODULUS = 251;
    private static final int HEADER = Long.BYTES;

    private PayloadPattern() {
    }

    /**
     * Writes message {@code k} of {@code size} bytes at the buffer's position and advances the position by
     * {@code size}; flip the buffer before sending it.
     *
     * @throws java.nio.BufferOverflowException fewer than {@code size} bytes remain
     */
    public static void fill(ByteBuffer dst, long k, int size) {
        if (k < 0 || size < 0) {
            throw new IllegalArgumentException("need k >= 0 and size >= 0, was " + k + ", " + size);
        }
        if (dst.remaining() < size) {
            throw new java.nio.BufferOverflowException();
        }
        int header = Math.min(HEADER, size);
        // The low-order bytes of a big-endian long are its last ones: skip the first 8 - header.
        for (int b = HEADER - header; b < HEADER; b++) {
            dst.put((byte) (k >>> (8 * (HEADER - 1 - b))));
        }
        // Running remainder instead of a modulo per byte: the body loop stays a compare and an add.
        int v = bodyStart(k);
        for (int i = HEADER; i < size; i++) {
            dst.put((byte) v);
            if (++v == MODULUS) {
                v = 0;
            }
        }
    }

    /**
     * Checks the payload between the buffer's position and limit, without moving the position.
     *
     * @return the sequence number the payload claims (only its low {@code 8 * size} bits when the size is below 8;
     *         0 for an empty payload), or {@link #CORRUPT} if the body does not match that number
     */
    public static long claimedSequence(ByteBuffer payload) {
        int start = payload.position();
        int size = payload.remaining();
        int header = Math.min(HEADER, size);
        long k = 0;
        for (int b = 0; b < header; b++) {
            k = (k << 8) | (payload.get(start + b) & 0xff);
        }
        if (size < HEADER) {
            return k;
        }
        if (k < 0) {
            // The tools never count that far: a set sign bit is a damaged header.
            return CORRUPT;
        }
        int v = bodyStart(k);
        for (int i = HEADER; i < size; i++) {
            if ((payload.get(start + i) & 0xff) != v) {
                return CORRUPT;
            }
            if (++v == MODULUS) {
                v = 0;
            }
        }
        return k;
    }

    /** The bits of {@code k} a payload of {@code size} bytes shows: all of them from 8 bytes on. */
    public static long visibleMask(int size) {
        return size >= HEADER ? -1L : (1L << (8 * size)) - 1;
    }

    /** Whether a payload of {@code size} bytes claiming {@code claimed} is message {@code expected}. */
    public static boolean matches(long claimed, long expected, int size) {
        long mask = visibleMask(size);
        return claimed != CORRUPT && (claimed & mask) == (expected & mask);
    }

    /** The value of the byte at offset 8 of message {@code k}: {@code (k + 8) mod 251} without overflow. */
    private static int bodyStart(long k) {
        return (int) ((k % MODULUS + HEADER) % MODULUS);
    }
}
