package org.rds4j.core.cong;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import org.rds4j.core.spi.FrameSink;
import org.rds4j.core.wire.RdsHeader;

/**
 * Coverage-guided fuzzing of congestion maps as a peer sends them (docs/security.md, "Fuzzing"): any bits, any length. A map of
 * the wrong length is refused whole and changes nothing; a map of 8192 bytes replaces ours bit for bit in the
 * kernel's order (port p is bit {@code p & 7} of byte {@code p >>> 3}), and what we write back on the wire is the same
 * bytes under a map header. The path's handling of map frames (a wrong length is skipped, flags must be exactly
 * 0x01) is fuzzed through a real stack in {@code org.rds4j.core.stack.PathFuzzTest}.
 */
class CongestionMapFuzzTest {

    @FuzzTest
    void replaceSetClear(FuzzedDataProvider data) {
        // The peer's bytes: a few chosen ports, a run of raw bytes at a chosen place, a chosen length.
        byte[] wire = new byte[CongestionMap.BYTES];
        int ports = data.consumeInt(0, 16);
        for (int i = 0; i < ports; i++) {
            int p = data.consumeInt(0, 65535);
            wire[p >>> 3] |= (byte) (1 << (p & 7));
        }
        byte[] raw = data.consumeBytes(data.consumeInt(0, 64));
        System.arraycopy(raw, 0, wire, data.consumeInt(0, CongestionMap.BYTES - raw.length), raw.length);
        int length = data.consumeBoolean() ? CongestionMap.BYTES : data.consumeInt(0, CongestionMap.BYTES + 64);

        CongestionMap map = new CongestionMap();
        byte[] model = new byte[CongestionMap.BYTES];
        ByteBuffer buffer = ByteBuffer.allocate(length);
        buffer.put(wire, 0, Math.min(length, wire.length));
        buffer.clear();                                  // all `length` bytes, the map's and any beyond it
        long generation = map.generation();
        if (length != CongestionMap.BYTES) {
            assertThrows(IllegalArgumentException.class, () -> map.replace(buffer));
            assertEquals(generation, map.generation(), "a refused map changes nothing");
        } else {
            // As the receive path hands it over: filled, not flipped; the notify runs under the map's monitor.
            buffer.position(buffer.limit());
            AtomicInteger notified = new AtomicInteger();
            CongestionFrames.received(map, buffer, () -> {
                assertTrue(Thread.holdsLock(map), "congestion monitors are woken under the map's monitor");
                notified.incrementAndGet();
            });
            assertEquals(1, notified.get());
            assertEquals(generation + 1, map.generation());
            model = wire.clone();
        }
        check(map, model);

        // Then our own sockets congest and drain on top of it.
        int ops = data.consumeInt(0, 32);
        for (int i = 0; i < ops; i++) {
            int p = data.consumeInt(0, 65535);
            boolean wasSet = bit(model, p);
            if (data.consumeBoolean()) {
                assertEquals(!wasSet, map.set(p), "set(" + p + ") reports a change");
                model[p >>> 3] |= (byte) (1 << (p & 7));
            } else {
                assertEquals(wasSet, map.clear(p), "clear(" + p + ") reports a change");
                model[p >>> 3] &= (byte) ~(1 << (p & 7));
            }
            assertEquals(bit(model, p), map.isCongested(p));
        }
        check(map, model);

        // What goes back on the wire is exactly the map under a map header.
        CongestionFrames frames = new CongestionFrames();
        byte[][] written = new byte[2][];
        frames.write(map, new FrameSink() {
            @Override
            public boolean isWritable() {
                return true;
            }

            @Override
            public void write(ByteBuffer header, ByteBuffer payload) {
                written[0] = new byte[header.remaining()];
                header.duplicate().get(written[0]);
                written[1] = new byte[payload.remaining()];
                payload.duplicate().get(written[1]);
            }

            @Override
            public long streamOffset() {
                return 0;
            }
        });
        RdsHeader h = new RdsHeader().decode(ByteBuffer.wrap(written[0]));
        assertTrue(h.isCongestionMap() && h.length() == CongestionMap.BYTES && h.sequence() == 0
                && h.sourcePort() == 0 && h.destinationPort() == 0, h.toString());
        assertArrayEquals(model, written[1]);
    }

    private static void check(CongestionMap map, byte[] model) {
        byte[] copy = new byte[CongestionMap.BYTES];
        map.copyTo(copy);
        assertArrayEquals(model, copy, "the map holds the peer's bytes as they came");
        int[] expected = IntStream.range(0, 65536).filter(p -> bit(model, p)).toArray();
        assertArrayEquals(expected, map.congestedPorts(), "congested ports in the kernel's bit order");
        for (int p : expected) {
            assertTrue(map.isCongested(p), "port " + p);
        }
        assertEquals(expected.length, Arrays.stream(expected).distinct().count());
    }

    private static boolean bit(byte[] bits, int port) {
        return (bits[port >>> 3] >>> (port & 7) & 1) != 0;
    }
}
