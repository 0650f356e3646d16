package org.rds4j.core.wire;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Coverage-guided fuzzing of the 16-byte extension area a peer fills at will (docs/security.md, "Fuzzing"): any mix of NPATHS,
 * GEN_NUM, SPORT_IDX, the RDMA types, VERSION and unknown types, several per message, truncated or not.
 *
 * <p>Reading: {@link ExtensionHeaders#forEach} must visit entries back to back from offset 0, each of its type's
 * size and inside the area, and stop where {@link ExtensionHeaders#end} says; {@code find} must return the first
 * entry's value; nothing may throw. Writing: {@link ExtensionHeaders#add} (what rds4j does to its own probes and
 * pongs) must either refuse and leave the area untouched, or write exactly its entry (and terminator) where the
 * kernel generation's rule puts it, after which a reader finds it as the last entry.
 */
class ExtensionHeadersFuzzTest {

    /** One entry as the reader reports it. */
    record Entry(int type, int offset, int size) {
    }

    @FuzzTest
    void parseAndAdd(FuzzedDataProvider data) {
        byte[] area = Arrays.copyOf(data.consumeBytes(RdsHeader.EXTHDR_SIZE), RdsHeader.EXTHDR_SIZE);
        checkRead(area);
        int adds = data.consumeInt(0, 6);
        for (int i = 0; i < adds; i++) {
            int type = data.consumeInt(-1, 17);
            long value = data.consumeLong();
            ExtensionHeaders.AddMode mode = data.consumeBoolean()
                    ? ExtensionHeaders.AddMode.SINGLE : ExtensionHeaders.AddMode.APPEND;
            checkAdd(area, type, value, mode);
            checkRead(area);
        }
    }

    static List<Entry> checkRead(byte[] area) {
        List<Entry> entries = new ArrayList<>();
        int[] pos = {0};
        ExtensionHeaders.forEach(area, (type, a, offset, size) -> {
            assertTrue(type >= 1 && type < ExtensionHeaders.MAX_TYPE, "type " + type);
            assertEquals(pos[0] + 1, offset, "entries are back to back from offset 0");
            assertEquals(type, Byte.toUnsignedInt(area[pos[0]]), "the type byte precedes its payload");
            assertEquals(ExtensionHeaders.payloadSize(type), size, "the type fixes the size");
            assertTrue(offset + size <= area.length, "an entry ends inside the area");
            entries.add(new Entry(type, offset, size));
            pos[0] = offset + size;
        });
        assertEquals(pos[0], ExtensionHeaders.end(area), "end() is where the reader stopped");
        for (int type = 0; type <= ExtensionHeaders.MAX_TYPE; type++) {
            long expected = -1;
            for (Entry e : entries) {
                if (e.type == type) {
                    expected = value(area, e.offset, e.size);
                    break;
                }
            }
            assertEquals(expected, ExtensionHeaders.find(area, type), "find(" + type + ") is the first entry's value");
        }
        assertNotNull(ExtensionHeaders.describe(area));
        return entries;
    }

    static void checkAdd(byte[] area, int type, long value, ExtensionHeaders.AddMode mode) {
        byte[] before = area.clone();
        List<Entry> old = checkRead(before);
        boolean added = ExtensionHeaders.add(area, type, value, mode);
        if (!added) {
            assertArrayEquals(before, area, "a refused add changes nothing");
            return;
        }
        assertTrue(type > 0 && type < ExtensionHeaders.MAX_TYPE, "added a type of " + type);
        int size = ExtensionHeaders.payloadSize(type);
        int at = mode == ExtensionHeaders.AddMode.SINGLE ? 0 : ExtensionHeaders.end(before);
        if (mode == ExtensionHeaders.AddMode.SINGLE) {
            assertEquals(0, before[0], "6.1's rule: only into an empty area");
            assertTrue(1 + size < area.length, "6.1's rule: room for the terminator");
        }
        int stop = Math.min(area.length, at + 1 + size + 1);
        assertArrayEquals(Arrays.copyOf(before, at), Arrays.copyOf(area, at), "bytes before the entry unchanged");
        assertArrayEquals(Arrays.copyOfRange(before, stop, area.length), Arrays.copyOfRange(area, stop, area.length),
                "bytes after the entry and its terminator unchanged");
        assertEquals(type, Byte.toUnsignedInt(area[at]));
        long mask = size == 8 ? -1L : (1L << (8 * size)) - 1;
        assertEquals(value & mask, value(area, at + 1, size), "the payload is the value's low bytes, big-endian");
        if (at + 1 + size < area.length) {
            assertEquals(0, area[at + 1 + size], "a terminator follows when there is room");
        }
        List<Entry> now = checkRead(area);
        assertFalse(now.isEmpty());
        assertEquals(new Entry(type, at + 1, size), now.get(now.size() - 1), "the new entry is read last");
        if (mode == ExtensionHeaders.AddMode.APPEND) {
            assertEquals(old, now.subList(0, now.size() - 1), "appending keeps the entries before it");
        }
    }

    private static long value(byte[] area, int offset, int size) {
        long v = 0;
        for (int i = 0; i < size; i++) {
            v = (v << 8) | Byte.toUnsignedInt(area[offset + i]);
        }
        return v;
    }
}
