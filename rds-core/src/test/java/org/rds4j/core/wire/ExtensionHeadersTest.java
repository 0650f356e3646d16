package org.rds4j.core.wire;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import org.rds4j.core.wire.ExtensionHeaders.AddMode;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;

/** The 16-byte extension area of the header (docs/protocol.md, "Extension headers"; net/rds/message.c). */
class ExtensionHeadersTest {

    /** One entry as the parser reports it: type and payload bytes. */
    record Entry(int type, byte[] payload) {
        @Override
        public boolean equals(Object o) {
            return o instanceof Entry e && e.type == type && Arrays.equals(e.payload, payload);
        }

        @Override
        public int hashCode() {
            return type * 31 + Arrays.hashCode(payload);
        }

        @Override
        public String toString() {
            StringBuilder sb = new StringBuilder().append(type).append(':');
            for (byte b : payload) {
                sb.append(String.format("%02x", b));
            }
            return sb.toString();
        }

        /** The payload as an unsigned big-endian number (the low bytes of the value that was added). */
        long value() {
            long v = 0;
            for (byte b : payload) {
                v = (v << 8) | (b & 0xFF);
            }
            return v;
        }

        static Entry of(int type, long value) {
            int size = ExtensionHeaders.payloadSize(type);
            byte[] p = new byte[size];
            for (int i = 0; i < size; i++) {
                p[i] = (byte) (value >>> (8 * (size - 1 - i)));
            }
            return new Entry(type, p);
        }
    }

    private static List<Entry> parse(byte[] area) {
        List<Entry> out = new ArrayList<>();
        ExtensionHeaders.forEach(area, (type, a, off, size) -> {
            assertEquals(ExtensionHeaders.payloadSize(type), size, "visitor size is the table size");
            out.add(new Entry(type, Arrays.copyOfRange(a, off, off + size)));
        });
        return out;
    }

    /** A 16-byte extension area written in hex (spaces ignored). */
    private static byte[] hex(String s) {
        s = s.replace(" ", "");
        assertEquals(32, s.length(), "an extension area is 16 bytes: " + s);
        byte[] b = new byte[s.length() / 2];
        for (int i = 0; i < b.length; i++) {
            b[i] = (byte) Integer.parseInt(s.substring(2 * i, 2 * i + 2), 16);
        }
        return b;
    }

    /** Payload sizes by type as in current kernels; unknown types below 16 have none. */
    @Example
    void payloadSizesAreTheKernelTable() {
        int[] expected = {0, 4, 4, 8, 8, 2, 4, 0, 1, 0, 0, 0, 0, 0, 0, 0};
        for (int t = 0; t < 16; t++) {
            assertEquals(expected[t], ExtensionHeaders.payloadSize(t), "type " + t);
        }
        assertEquals(0, ExtensionHeaders.payloadSize(16));
        assertEquals(0, ExtensionHeaders.payloadSize(255));
        assertEquals(0, ExtensionHeaders.payloadSize(-1));
        assertEquals(5, ExtensionHeaders.NPATHS);
        assertEquals(6, ExtensionHeaders.GEN_NUM);
        assertEquals(8, ExtensionHeaders.SPORT_IDX);
        assertEquals(16, ExtensionHeaders.MAX_TYPE);
    }

    @Provide
    Arbitrary<List<Entry>> entries() {
        Arbitrary<Entry> entry = Combinators.combine(Arbitraries.integers().between(1, 15), Arbitraries.longs())
                .as(Entry::of);
        return entry.list().ofMaxSize(10);
    }

    /**
     * Post-6.1 APPEND (protocol.md "What each kernel generation does"): entries go one after another; each parses back in order as long as it fits;
     * a terminator 0 follows unless the entries fill exactly 16 bytes.
     */
    @Property(tries = 1000)
    void appendedEntriesParseBackInOrder(@ForAll("entries") List<Entry> toAdd) {
        byte[] area = new byte[16];
        List<Entry> added = new ArrayList<>();
        int used = 0;
        for (Entry e : toAdd) {
            boolean fits = used + 1 + e.payload().length <= 16;
            assertEquals(fits, ExtensionHeaders.add(area, e.type(), e.value(), AddMode.APPEND), "add " + e);
            if (fits) {
                added.add(e);
                used += 1 + e.payload().length;
            }
            assertEquals(used, ExtensionHeaders.end(area));
        }
        assertEquals(added, parse(area));
        if (used < 16) {
            assertEquals(0, area[used], "terminator after the last entry");
        }
        for (int i = used; i < 16; i++) {
            assertEquals(0, area[i], "untouched byte " + i);
        }
        // find() returns the first entry of a type
        for (int t = 1; t < 16; t++) {
            final int type = t;
            long expected = added.stream().filter(e -> e.type() == type).findFirst().map(Entry::value).orElse(-1L);
            assertEquals(expected, ExtensionHeaders.find(area, type), "find type " + t);
        }
    }

    /** Post-6.1: 16 bytes used exactly leave no room for, and need no, terminator. */
    @Example
    void appendFillsExactly16BytesWithoutTerminator() {
        byte[] area = new byte[16];
        assertTrue(ExtensionHeaders.add(area, ExtensionHeaders.RDMA_DEST, 0x1122334455667788L, AddMode.APPEND));
        assertTrue(ExtensionHeaders.add(area, ExtensionHeaders.GEN_NUM, 0xA1B2C3D4L, AddMode.APPEND));
        assertTrue(ExtensionHeaders.add(area, ExtensionHeaders.SPORT_IDX, 0, AddMode.APPEND));
        assertArrayEquals(hex("03 1122334455667788 06 a1b2c3d4 08 00"), area);
        assertEquals(16, ExtensionHeaders.end(area));
        assertFalse(ExtensionHeaders.add(area, 7, 0, AddMode.APPEND),
                "a zero-length entry does not fit either");
        assertEquals(List.of(Entry.of(3, 0x1122334455667788L), Entry.of(6, 0xA1B2C3D4L), Entry.of(8, 0)),
                parse(area));
    }

    /** A post-6.1 probe (protocol.md "What each kernel generation does") carries NPATHS, GEN_NUM and SPORT_IDX one after another. */
    @Example
    void appendBuildsThePost61Probe() {
        byte[] area = new byte[16];
        assertTrue(ExtensionHeaders.add(area, ExtensionHeaders.NPATHS, 8, AddMode.APPEND));
        assertTrue(ExtensionHeaders.add(area, ExtensionHeaders.GEN_NUM, 0xDEADBEEFL, AddMode.APPEND));
        assertTrue(ExtensionHeaders.add(area, ExtensionHeaders.SPORT_IDX, 0, AddMode.APPEND));
        assertArrayEquals(hex("05 0008 06 deadbeef 08 00 000000000000"), area);
        assertEquals(8, ExtensionHeaders.find(area, ExtensionHeaders.NPATHS));
        assertEquals(0xDEADBEEFL, ExtensionHeaders.find(area, ExtensionHeaders.GEN_NUM));
        assertEquals(0, ExtensionHeaders.find(area, ExtensionHeaders.SPORT_IDX));
    }

    /**
     * Linux 6.1 SINGLE: one entry into an empty area, written as type, payload, 0; any second entry is
     * refused silently, so a 6.1 probe carries NPATHS but never GEN_NUM.
     */
    @Property(tries = 500)
    void singleAcceptsOneEntryAndRefusesASecond(@ForAll @IntRange(min = 1, max = 15) int first,
            @ForAll long value, @ForAll @IntRange(min = 0, max = 20) int second, @ForAll long value2) {
        byte[] area = new byte[16];
        assertTrue(ExtensionHeaders.add(area, first, value, AddMode.SINGLE));
        Entry e = Entry.of(first, value);
        assertEquals(first, area[0] & 0xFF);
        assertArrayEquals(e.payload(), Arrays.copyOfRange(area, 1, 1 + e.payload().length));
        assertEquals(0, area[1 + e.payload().length], "terminator");
        byte[] before = area.clone();
        assertFalse(ExtensionHeaders.add(area, second, value2, AddMode.SINGLE));
        assertArrayEquals(before, area, "a refused add changes nothing");
        assertEquals(List.of(e), parse(area));
    }

    /** The 6.1 probe is NPATHS=8 then GEN_NUM, of which only NPATHS lands: 05 00 08 00 ... */
    @Example
    void linux61ProbeCarriesNpathsButNotGenNum() {
        byte[] area = new byte[16];
        assertTrue(ExtensionHeaders.add(area, ExtensionHeaders.NPATHS, 8, AddMode.SINGLE));
        assertFalse(ExtensionHeaders.add(area, ExtensionHeaders.GEN_NUM, 0x12345678L, AddMode.SINGLE));
        assertArrayEquals(hex("05 0008 00 000000000000000000000000"), area);
        assertEquals(-1, ExtensionHeaders.find(area, ExtensionHeaders.GEN_NUM));
    }

    /** The bytes of a real 6.1 probe ping/pong (golden 01-first-contact) parse as NPATHS=8 and nothing else. */
    @Example
    void linux61ProbeBytesParseAsNpaths8() {
        byte[] area = hex("05000800000000000000000000000000");
        assertEquals(List.of(new Entry(5, new byte[] {0, 8})), parse(area));
        assertEquals(8, ExtensionHeaders.find(area, ExtensionHeaders.NPATHS));
        assertEquals(-1, ExtensionHeaders.find(area, ExtensionHeaders.GEN_NUM));
        assertEquals(3, ExtensionHeaders.end(area));
        assertEquals("NPATHS=0x0008", ExtensionHeaders.describe(area));
    }

    @Example
    void zeroTypeAndTypesFrom16AreNeverAdded() {
        for (AddMode mode : AddMode.values()) {
            byte[] area = new byte[16];
            assertFalse(ExtensionHeaders.add(area, 0, 1, mode));
            assertFalse(ExtensionHeaders.add(area, 16, 1, mode));
            assertFalse(ExtensionHeaders.add(area, 255, 1, mode));
            assertFalse(ExtensionHeaders.add(area, -1, 1, mode));
            assertArrayEquals(new byte[16], area);
        }
    }

    /** Reading: an undefined type below 16 is a zero-length entry; the next byte is read as a type. */
    @Example
    void unknownTypesBelow16AreZeroLength() {
        byte[] area = hex("07 05 0008 0f 09 06 01020304 00 05 0001 00");
        assertEquals(List.of(new Entry(7, new byte[0]), new Entry(5, new byte[] {0, 8}), new Entry(15, new byte[0]),
                new Entry(9, new byte[0]), new Entry(6, new byte[] {1, 2, 3, 4})), parse(area));
        assertEquals(8, ExtensionHeaders.find(area, ExtensionHeaders.NPATHS));
        assertEquals(0x01020304L, ExtensionHeaders.find(area, ExtensionHeaders.GEN_NUM));
        assertEquals(0, ExtensionHeaders.find(area, 7), "a zero-length entry is found, with value 0");
    }

    /** Reading: a type of 16 or more ends the list like a 0. */
    @Property(tries = 240)
    void typesFrom16EndTheList(@ForAll @IntRange(min = 16, max = 255) int stop) {
        byte[] area = hex("05 0008 00 06 01020304 00000000000000");
        area[3] = (byte) stop;
        assertEquals(List.of(new Entry(5, new byte[] {0, 8})), parse(area));
        assertEquals(-1, ExtensionHeaders.find(area, ExtensionHeaders.GEN_NUM));
        assertEquals(3, ExtensionHeaders.end(area));
    }

    /** Reading: an entry whose payload would run past byte 16 is not reported and ends the list. */
    @Example
    void anEntryRunningPastTheEndIsDropped() {
        byte[] area = hex("05 0001 05 0002 05 0003 06 01020304 03 01");
        assertEquals(List.of(Entry.of(5, 1), Entry.of(5, 2), Entry.of(5, 3), Entry.of(6, 0x01020304L)), parse(area));
        assertEquals(1, ExtensionHeaders.find(area, ExtensionHeaders.NPATHS), "the first NPATHS");
        assertEquals(-1, ExtensionHeaders.find(area, ExtensionHeaders.RDMA_DEST));
        assertEquals(14, ExtensionHeaders.end(area));
        // APPEND writes over the dangling type byte when the new entry fits there
        assertFalse(ExtensionHeaders.add(area, ExtensionHeaders.NPATHS, 9, AddMode.APPEND));
        assertTrue(ExtensionHeaders.add(area, ExtensionHeaders.SPORT_IDX, 0, AddMode.APPEND));
        assertEquals(List.of(Entry.of(5, 1), Entry.of(5, 2), Entry.of(5, 3), Entry.of(6, 0x01020304L),
                Entry.of(8, 0)), parse(area));
    }

    /** The receiver's parser accepts any content; so must ours (forEach, find, end, describe). */
    @Property(tries = 2000)
    void parsingArbitraryBytesNeverThrows(@ForAll @Size(16) byte[] area) {
        byte[] copy = area.clone();
        List<Entry> parsed = parse(area);
        int total = 0;
        for (Entry e : parsed) {
            assertTrue(e.type() > 0 && e.type() < 16);
            total += 1 + e.payload().length;
        }
        assertTrue(total <= 16);
        assertEquals(total, ExtensionHeaders.end(area), "end() is where the parsed entries stop");
        for (int t = 0; t < 20; t++) {
            ExtensionHeaders.find(area, t);
        }
        ExtensionHeaders.describe(area);
        assertArrayEquals(copy, area, "parsing does not modify the area");
    }

    /** Parsing agrees with a model written directly from the reading rules of protocol.md "Extension headers". */
    @Property(tries = 2000)
    void parsingFollowsTheKernelRules(@ForAll("kernelishAreas") byte[] area) {
        List<Entry> model = new ArrayList<>();
        int pos = 0;
        while (pos < 16) {
            int type = area[pos++] & 0xFF;
            if (type == 0 || type >= 16) {
                break;
            }
            int len = ExtensionHeaders.payloadSize(type);
            if (pos + len > 16) {
                break;
            }
            model.add(new Entry(type, Arrays.copyOfRange(area, pos, pos + len)));
            pos += len;
        }
        assertEquals(model, parse(area));
    }

    /** Areas biased towards small type bytes, so that long lists of entries are common. */
    @Provide
    Arbitrary<byte[]> kernelishAreas() {
        Arbitrary<Byte> b = Arbitraries.frequencyOf(
                net.jqwik.api.Tuple.of(6, Arbitraries.bytes().between((byte) 1, (byte) 15)),
                net.jqwik.api.Tuple.of(1, Arbitraries.just((byte) 0)),
                net.jqwik.api.Tuple.of(1, Arbitraries.bytes()));
        return b.array(byte[].class).ofSize(16);
    }

    @Example
    void describeNamesEntries() {
        byte[] area = new byte[16];
        assertEquals("none", ExtensionHeaders.describe(area));
        ExtensionHeaders.add(area, ExtensionHeaders.NPATHS, 8, AddMode.APPEND);
        ExtensionHeaders.add(area, ExtensionHeaders.GEN_NUM, 0x1234abcdL, AddMode.APPEND);
        ExtensionHeaders.add(area, 7, 0, AddMode.APPEND);
        assertEquals("NPATHS=0x0008 GEN_NUM=0x1234abcd TYPE7", ExtensionHeaders.describe(area));
    }
}
