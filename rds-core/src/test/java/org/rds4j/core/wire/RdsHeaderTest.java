package org.rds4j.core.wire;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;

import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;
import net.jqwik.api.constraints.Size;

/** The 48-byte header codec: layout and byte order of every field (docs/protocol.md, "Header"; net/rds/rds.h). */
class RdsHeaderTest {

    private static byte[] encode(RdsHeader h) {
        ByteBuffer buf = ByteBuffer.allocate(RdsHeader.SIZE);
        h.encode(buf);
        assertEquals(RdsHeader.SIZE, buf.position(), "encode writes exactly 48 bytes");
        return buf.array();
    }

    private static long bigEndian(byte[] b, int off, int len) {
        long v = 0;
        for (int i = 0; i < len; i++) {
            v = (v << 8) | (b[off + i] & 0xFF);
        }
        return v;
    }

    /** Every field at its offset, big-endian, over the full unsigned range of each field. */
    @Property(tries = 500)
    void encodeDecodeRoundTripsEveryFieldValue(@ForAll long seq, @ForAll long ack,
            @ForAll @LongRange(min = 0, max = 0xFFFF_FFFFL) long len,
            @ForAll @IntRange(min = 0, max = 0xFFFF) int sport, @ForAll @IntRange(min = 0, max = 0xFFFF) int dport,
            @ForAll @IntRange(min = 0, max = 0xFF) int flags, @ForAll @IntRange(min = 0, max = 0xFF) int credit,
            @ForAll int padding, @ForAll @IntRange(min = 0, max = 0xFFFF) int csum,
            @ForAll @Size(16) byte[] ext) {
        RdsHeader h = new RdsHeader().sequence(seq).ack(ack).length(len).sourcePort(sport).destinationPort(dport)
                .flags(flags).credit(credit).padding(padding).checksum(csum);
        System.arraycopy(ext, 0, h.extensions(), 0, 16);

        byte[] wire = encode(h);
        assertEquals(seq, bigEndian(wire, 0, 8));
        assertEquals(ack, bigEndian(wire, 8, 8));
        assertEquals(len, bigEndian(wire, 16, 4));
        assertEquals(sport, bigEndian(wire, 20, 2));
        assertEquals(dport, bigEndian(wire, 22, 2));
        assertEquals(flags, wire[24] & 0xFF);
        assertEquals(credit, wire[25] & 0xFF);
        assertEquals(padding, (int) bigEndian(wire, 26, 4));
        assertEquals(csum, bigEndian(wire, 30, 2));
        assertArrayEquals(ext, Arrays.copyOfRange(wire, 32, 48));

        RdsHeader back = new RdsHeader().decode(ByteBuffer.wrap(wire));
        assertEquals(h, back);
        assertEquals(seq, back.sequence());
        assertEquals(ack, back.ack());
        assertEquals(len, back.length());
        assertEquals(sport, back.sourcePort());
        assertEquals(dport, back.destinationPort());
        assertEquals(flags, back.flags());
        assertEquals(credit, back.credit());
        assertEquals(padding, back.padding());
        assertEquals(csum, back.checksum());
        assertArrayEquals(ext, back.extensions());
        assertEquals(h.hashCode(), back.hashCode());
    }

    /** The kernel copies the 48 bytes verbatim, so any 48 bytes must pass through unchanged. */
    @Property(tries = 1000)
    void arbitrary48BytesDecodeAndReencodeIdentically(@ForAll @Size(48) byte[] raw) {
        RdsHeader h = new RdsHeader().decode(ByteBuffer.wrap(raw));
        assertArrayEquals(raw, encode(h));
        assertArrayEquals(raw, encode(new RdsHeader().set(h)), "set() copies every field");
    }

    /** decode reads at the buffer's position and advances it by 48, leaving following bytes alone. */
    @Property(tries = 200)
    void decodeConsumesExactly48BytesFromThePosition(@ForAll @Size(min = 48, max = 120) byte[] raw,
            @ForAll @IntRange(min = 0, max = 72) int start) {
        int from = Math.min(start, raw.length - 48);
        ByteBuffer in = ByteBuffer.wrap(raw);
        in.position(from);
        RdsHeader h = new RdsHeader().decode(in);
        assertEquals(from + 48, in.position());
        assertArrayEquals(Arrays.copyOfRange(raw, from, from + 48), encode(h));
    }

    @Example
    void decodeRefusesFewerThan48Bytes() {
        ByteBuffer in = ByteBuffer.allocate(47);
        assertThrows(IllegalArgumentException.class, () -> new RdsHeader().decode(in));
        assertEquals(0, in.position(), "nothing consumed on refusal");
    }

    /** h_len is u32, ports and csum u16, flags and credit u8: wider values are refused, not truncated. */
    @Example
    void settersRejectOutOfRangeValues() {
        RdsHeader h = new RdsHeader();
        assertThrows(IllegalArgumentException.class, () -> h.length(-1));
        assertThrows(IllegalArgumentException.class, () -> h.length(0x1_0000_0000L));
        assertThrows(IllegalArgumentException.class, () -> h.length(Long.MIN_VALUE));
        assertThrows(IllegalArgumentException.class, () -> h.sourcePort(-1));
        assertThrows(IllegalArgumentException.class, () -> h.sourcePort(0x10000));
        assertThrows(IllegalArgumentException.class, () -> h.destinationPort(-1));
        assertThrows(IllegalArgumentException.class, () -> h.destinationPort(0x10000));
        assertThrows(IllegalArgumentException.class, () -> h.flags(-1));
        assertThrows(IllegalArgumentException.class, () -> h.flags(0x100));
        assertThrows(IllegalArgumentException.class, () -> h.credit(-1));
        assertThrows(IllegalArgumentException.class, () -> h.credit(0x100));
        assertThrows(IllegalArgumentException.class, () -> h.checksum(-1));
        assertThrows(IllegalArgumentException.class, () -> h.checksum(0x10000));
        assertEquals(new RdsHeader(), h, "a refused value leaves the header unchanged");
    }

    @Property(tries = 300)
    void settersRejectEveryValueOutsideTheFieldWidth(@ForAll int v, @ForAll long l) {
        RdsHeader h = new RdsHeader();
        if (v < 0 || v > 0xFFFF) {
            assertThrows(IllegalArgumentException.class, () -> h.sourcePort(v));
            assertThrows(IllegalArgumentException.class, () -> h.destinationPort(v));
            assertThrows(IllegalArgumentException.class, () -> h.checksum(v));
        }
        if (v < 0 || v > 0xFF) {
            assertThrows(IllegalArgumentException.class, () -> h.flags(v));
            assertThrows(IllegalArgumentException.class, () -> h.credit(v));
        }
        if (l < 0 || l > 0xFFFF_FFFFL) {
            assertThrows(IllegalArgumentException.class, () -> h.length(l));
        }
    }

    @Example
    void settersAcceptTheFieldBounds() {
        RdsHeader h = new RdsHeader().length(0xFFFF_FFFFL).sourcePort(0xFFFF).destinationPort(0xFFFF)
                .flags(0xFF).credit(0xFF).checksum(0xFFFF).sequence(-1).ack(-1).padding(-1);
        byte[] wire = encode(h);
        for (int i = 0; i < 32; i++) {
            assertEquals((byte) 0xFF, wire[i], "byte " + i);
        }
    }

    /** A message is a congestion map iff h_flags == 0x01 exactly, not when bit 0 is merely set. */
    @Property(tries = 256)
    void isCongestionMapOnlyForFlagsExactly0x01(@ForAll @IntRange(min = 0, max = 0xFF) int flags) {
        RdsHeader h = new RdsHeader().flags(flags);
        assertEquals(flags == 0x01, h.isCongestionMap());
        assertEquals((flags & RdsHeader.FLAG_CONG_BITMAP) != 0, h.hasFlag(RdsHeader.FLAG_CONG_BITMAP));
    }

    @Example
    void congestionBitCombinedWithRetransmittedIsNotACongestionMap() {
        RdsHeader h = new RdsHeader().flags(RdsHeader.FLAG_CONG_BITMAP | RdsHeader.FLAG_RETRANSMITTED);
        assertFalse(h.isCongestionMap());
        assertTrue(h.hasFlag(RdsHeader.FLAG_RETRANSMITTED));
    }

    /** The wire values of the flags. */
    @Example
    void flagValuesAreTheKernels() {
        assertEquals(0x01, RdsHeader.FLAG_CONG_BITMAP);
        assertEquals(0x02, RdsHeader.FLAG_ACK_REQUIRED);
        assertEquals(0x04, RdsHeader.FLAG_RETRANSMITTED);
        assertEquals(0x20, RdsHeader.FLAG_EXTHDR_EXTENSION);
        assertEquals(48, RdsHeader.SIZE);
        assertEquals(32, RdsHeader.EXTHDR_OFFSET);
        assertEquals(16, RdsHeader.EXTHDR_SIZE);
    }

    /** Messages start zero-filled; clear() restores that, and set() copies rather than shares the ext area. */
    @Property(tries = 100)
    void clearZeroesAndSetCopies(@ForAll @Size(48) byte[] raw) {
        RdsHeader h = new RdsHeader().decode(ByteBuffer.wrap(raw));
        RdsHeader copy = new RdsHeader().set(h);
        assertNotSame(h.extensions(), copy.extensions());
        h.clear();
        assertArrayEquals(new byte[48], encode(h));
        assertEquals(new RdsHeader(), h);
        assertArrayEquals(raw, encode(copy), "clearing the source does not touch the copy");
    }

    /**
     * The wire is big-endian whatever order the caller's buffer is set to. BUG: encode/decode use the
     * buffer's own order, so a little-endian buffer (e.g. one set to the native order) puts h_sequence etc. on the
     * wire byte-swapped.
     */
    @Example
    void encodeAndDecodeAreBigEndianWhateverTheBufferOrder() {
        RdsHeader h = new RdsHeader().sequence(0x0102030405060708L).length(0x10).sourcePort(4001)
                .destinationPort(4000);
        byte[] expected = encode(h);

        ByteBuffer le = ByteBuffer.allocate(RdsHeader.SIZE).order(ByteOrder.LITTLE_ENDIAN);
        h.encode(le);
        assertArrayEquals(expected, le.array(), "encode into a little-endian buffer");

        RdsHeader back = new RdsHeader().decode(ByteBuffer.wrap(expected).order(ByteOrder.LITTLE_ENDIAN));
        assertEquals(h, back, "decode from a little-endian buffer");
    }

    @Example
    void toStringShowsUnsignedSequenceAndExtensions() {
        RdsHeader h = new RdsHeader().sequence(-1).sourcePort(1);
        ExtensionHeaders.add(h.extensions(), ExtensionHeaders.NPATHS, 8, ExtensionHeaders.AddMode.SINGLE);
        String s = h.toString();
        assertTrue(s.contains("seq=18446744073709551615"), s);
        assertTrue(s.contains("NPATHS"), s);
    }
}
