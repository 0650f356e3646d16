package org.rds4j.tools;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.BufferOverflowException;
import java.nio.ByteBuffer;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;
import org.junit.jupiter.api.Test;

class PayloadPatternTest {

    private static ByteBuffer message(long k, int size) {
        ByteBuffer b = ByteBuffer.allocate(size);
        PayloadPattern.fill(b, k, size);
        return b.flip();
    }

    /** The layout spelled out byte by byte, as the kernel-side agent implements it. */
    @Test
    void layoutMatchesTheSharedDefinition() {
        assertArrayEquals(new byte[] {0, 0, 0, 0, 0, 0, 0, 1, 9, 10, 11}, message(1, 11).array());
        // 250 + 8 = 258 = 7 mod 251; the body wraps from 250 to 0.
        ByteBuffer m = message(250, 253);
        assertEquals(7, m.get(8));
        assertEquals((byte) 250, m.get(251));
        assertEquals(0, m.get(252));
        // Shorter than 8 bytes: the low-order bytes of the big-endian number.
        assertArrayEquals(new byte[] {0x02, 0x03, 0x04}, message(0x01020304L, 3).array());
        assertArrayEquals(new byte[] {0x04}, message(0x01020304L, 1).array());
        assertArrayEquals(new byte[0], message(77, 0).array());
        assertArrayEquals(new byte[] {1, 2, 3, 4, 5, 6, 7, 8}, message(0x0102030405060708L, 8).array());
    }

    @Property
    void everyByteFollowsTheFormula(@ForAll @LongRange(min = 0, max = Long.MAX_VALUE - (1 << 20)) long k,
            @ForAll @IntRange(min = 0, max = 2000) int size) {
        ByteBuffer m = message(k, size);
        for (int i = 0; i < size; i++) {
            int expected = i < 8
                    ? (int) (k >>> (8 * (7 - (i + 8 - Math.min(8, size)))))
                    : (int) ((k + i) % 251);
            assertEquals((byte) expected, m.get(i), "byte " + i);
        }
    }

    @Property
    void aMessageClaimsItsOwnNumber(@ForAll @LongRange(min = 0, max = Long.MAX_VALUE) long k,
            @ForAll @IntRange(min = 0, max = 1100) int size) {
        long claimed = PayloadPattern.claimedSequence(message(k, size));
        assertEquals(k & PayloadPattern.visibleMask(size), claimed);
        assertTrue(PayloadPattern.matches(claimed, k, size));
        if (size >= 8) {
            assertEquals(k, claimed);
        }
    }

    @Property
    void anySingleChangedByteIsCaught(@ForAll @LongRange(min = 0, max = 1L << 40) long k,
            @ForAll @IntRange(min = 9, max = 600) int size, @ForAll @IntRange(min = 0, max = 599) int at,
            @ForAll @IntRange(min = 1, max = 255) int xor) {
        ByteBuffer m = message(k, size);
        int i = at % size;
        m.put(i, (byte) (m.get(i) ^ xor));
        long claimed = PayloadPattern.claimedSequence(m);
        if (i >= 8) {
            assertEquals(PayloadPattern.CORRUPT, claimed);
        } else {
            // A header change moves k by d * 256^j with 0 < |d| < 256. The body catches it unless d = +-251 (the
            // prime divides d * 256^j only then): such a message claims another number, which the sequence check
            // catches instead. Either way it never passes as message k.
            assertTrue(claimed != k);
            long d = (claimed - k) >> (8 * (7 - i));
            assertTrue(claimed == PayloadPattern.CORRUPT || Math.abs(d) == 251, "claimed " + claimed);
        }
    }

    @Property
    void fillWritesExactlyItsBytesAtThePosition(@ForAll @LongRange(min = 0, max = 1L << 50) long k,
            @ForAll @IntRange(min = 0, max = 300) int size, @ForAll @IntRange(min = 0, max = 20) int before,
            @ForAll @IntRange(min = 0, max = 20) int after) {
        ByteBuffer b = ByteBuffer.allocate(before + size + after);
        for (int i = 0; i < b.capacity(); i++) {
            b.put(i, (byte) 0x5a);
        }
        b.position(before);
        PayloadPattern.fill(b, k, size);
        assertEquals(before + size, b.position());
        for (int i = 0; i < before; i++) {
            assertEquals(0x5a, b.get(i));
        }
        for (int i = before + size; i < b.capacity(); i++) {
            assertEquals(0x5a, b.get(i));
        }
        // Checking reads from the position of a read-only view and leaves the position alone.
        ByteBuffer view = b.duplicate().position(before).limit(before + size).asReadOnlyBuffer();
        assertEquals(k & PayloadPattern.visibleMask(size), PayloadPattern.claimedSequence(view));
        assertEquals(before, view.position());
        assertEquals(before + size, view.limit());
    }

    @Property
    void truncatedOrShiftedMessagesAreCaught(@ForAll @LongRange(min = 0, max = 1L << 40) long k,
            @ForAll @IntRange(min = 10, max = 500) int size) {
        ByteBuffer m = message(k, size);
        // Shifted by one byte: the header is garbage, and garbage cannot match its body.
        ByteBuffer shifted = m.duplicate().position(1);
        long claimed = PayloadPattern.claimedSequence(shifted);
        assertFalse(claimed == k, "a shifted message must not claim the original number");
    }

    @Property
    void shortMessagesMatchOnTheirLowBytesOnly(@ForAll @LongRange(min = 0, max = Long.MAX_VALUE / 2) long k,
            @ForAll @IntRange(min = 0, max = 7) int size) {
        long claimed = PayloadPattern.claimedSequence(message(k, size));
        long range = 1L << (8 * size);
        assertTrue(PayloadPattern.matches(claimed, k + range, size));
        if (size > 0) {
            assertFalse(PayloadPattern.matches(claimed, k + 1, size));
        }
    }

    @Test
    void refusesBadArguments() {
        assertThrows(IllegalArgumentException.class, () -> PayloadPattern.fill(ByteBuffer.allocate(8), -1, 8));
        assertThrows(BufferOverflowException.class, () -> PayloadPattern.fill(ByteBuffer.allocate(7), 0, 8));
        assertEquals(PayloadPattern.CORRUPT, PayloadPattern.claimedSequence(ByteBuffer.wrap(
                new byte[] {(byte) 0x80, 0, 0, 0, 0, 0, 0, 0})));
    }
}
