package org.rds4j.core.cong;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.Set;
import java.util.TreeSet;

import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;

/** The 8192-byte per-address congestion bitmap (docs/protocol.md, "Congestion maps"). */
class CongestionMapTest {

    private static byte[] bytes(CongestionMap map) {
        byte[] b = new byte[CongestionMap.BYTES];
        map.copyTo(b);
        return b;
    }

    /** Port 4000 is byte 500, mask 0x01. */
    @Example
    void port4000IsByte500Mask01() {
        CongestionMap map = new CongestionMap();
        map.set(4000);
        byte[] expected = new byte[8192];
        expected[500] = 0x01;
        assertArrayEquals(expected, bytes(map));
    }

    /** Golden 03-congestion: port 4020 is byte 502, bit 4 (mask 0x10). */
    @Example
    void port4020IsByte502Mask10() {
        byte[] wire = new byte[8192];
        wire[502] = 0x10;
        CongestionMap map = new CongestionMap();
        map.replace(ByteBuffer.wrap(wire));
        assertArrayEquals(new int[] {4020}, map.congestedPorts());
        assertTrue(map.isCongested(4020));
    }

    /** Port p is bit p % 8, least significant first, of byte p / 8; no other bit moves. */
    @Property(tries = 1000)
    void portIsBitPMod8OfBytePDiv8(@ForAll @IntRange(min = 0, max = 65535) int port) {
        CongestionMap map = new CongestionMap();
        assertTrue(map.set(port));
        byte[] expected = new byte[8192];
        expected[port / 8] = (byte) (1 << (port % 8));
        assertArrayEquals(expected, bytes(map));
        assertTrue(map.isCongested(port));
        assertArrayEquals(new int[] {port}, map.congestedPorts());
        assertTrue(map.clear(port));
        assertArrayEquals(new byte[8192], bytes(map));
        assertFalse(map.isCongested(port));
    }

    @Example
    void theExtremePortsAreTheFirstAndLastBits() {
        CongestionMap map = new CongestionMap();
        map.set(0);
        map.set(65535);
        byte[] b = bytes(map);
        assertEquals(0x01, b[0]);
        assertEquals((byte) 0x80, b[8191]);
        assertArrayEquals(new int[] {0, 65535}, map.congestedPorts());
    }

    /** set/clear report whether the bit changed, and only a change moves the generation (protocol.md "Congestion notifications"). */
    @Property(tries = 300)
    void setAndClearReturnWhetherTheyChangedTheBit(@ForAll @Size(max = 40) int[] ops) {
        CongestionMap map = new CongestionMap();
        Set<Integer> model = new TreeSet<>();
        for (int op : ops) {
            int port = Math.floorMod(op, 24) * 2731 % 65536; // few distinct ports, spread over the map
            boolean set = op >= 0;
            long gen = map.generation();
            boolean changed = set ? map.set(port) : map.clear(port);
            assertEquals(set ? model.add(port) : model.remove(port), changed, (set ? "set " : "clear ") + port);
            assertEquals(changed ? gen + 1 : gen, map.generation());
            assertEquals(model.contains(port), map.isCongested(port));
        }
        assertArrayEquals(model.stream().mapToInt(Integer::intValue).toArray(), map.congestedPorts(),
                "congestedPorts() lists the set ports in ascending order");
    }

    /** The 8192 wire bytes replace the map verbatim, and copyTo gives them back unchanged. */
    @Property(tries = 100)
    void replaceAndCopyToRoundTrip(@ForAll @Size(8192) byte[] wire) {
        CongestionMap map = new CongestionMap();
        ByteBuffer in = ByteBuffer.wrap(wire);
        map.replace(in);
        assertEquals(0, in.position(), "replace reads without consuming the caller's buffer");
        assertArrayEquals(wire, bytes(map));
        int count = 0;
        for (byte b : wire) {
            count += Integer.bitCount(b & 0xFF);
        }
        int[] ports = map.congestedPorts();
        assertEquals(count, ports.length);
        for (int p : ports) {
            assertTrue((wire[p >>> 3] & (1 << (p & 7))) != 0);
        }
    }

    @Example
    void replaceReadsFromTheBuffersPosition() {
        byte[] backing = new byte[8192 + 10];
        backing[10 + 500] = 0x01;
        ByteBuffer in = ByteBuffer.wrap(backing, 10, 8192);
        CongestionMap map = new CongestionMap();
        map.replace(in);
        assertArrayEquals(new int[] {4000}, map.congestedPorts());
    }

    @Example
    void replaceClearsPortsNotInTheNewMap() {
        CongestionMap map = new CongestionMap();
        map.set(4020);
        map.replace(ByteBuffer.allocate(8192));
        assertEquals(0, map.congestedPorts().length);
        assertFalse(map.isCongested(4020));
    }

    /** Every path carries a copy of each change: only a copy that changes a bit counts as a change. */
    @Example
    void aCopyOfTheMapAlreadyHeldChangesNothing() {
        CongestionMap map = new CongestionMap();
        byte[] wire = new byte[8192];
        wire[500] = 0x01;
        assertTrue(map.replace(ByteBuffer.wrap(wire)));
        long generation = map.generation();
        assertFalse(map.replace(ByteBuffer.wrap(wire.clone())), "the same bits again");
        assertEquals(generation, map.generation(), "waiters are not woken for a copy");
        wire[500] = 0;
        assertTrue(map.replace(ByteBuffer.wrap(wire)), "a bit cleared");
        assertEquals(generation + 1, map.generation());
    }

    /** The kernel ignores a map whose length is not 8192; ours refuses it. */
    @Example
    void replaceRefusesAnythingButExactly8192Bytes() {
        CongestionMap map = new CongestionMap();
        map.set(7);
        assertThrows(IllegalArgumentException.class, () -> map.replace(ByteBuffer.allocate(8191)));
        assertThrows(IllegalArgumentException.class, () -> map.replace(ByteBuffer.allocate(8193)));
        assertArrayEquals(new int[] {7}, map.congestedPorts(), "a refused map changes nothing");
    }

    @Example
    void awaitClearReturnsAtOnceForAClearPortAndTimesOutForACongestedOne() throws InterruptedException {
        CongestionMap map = new CongestionMap();
        assertTrue(map.awaitClear(4000, 0));
        map.set(4000);
        assertFalse(map.awaitClear(4000, 0));
        assertFalse(map.awaitClear(4000, 1_000_000));
    }
}
