package org.rds4j.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

class OptionsTest {

    @Test
    void sizesAcceptBytesAndBinaryUnits() {
        assertEquals(List.of(64, 1024, 8192, 65536, 1 << 20), Sizes.parseList("64,1K,8KiB,64k,1M"));
        assertEquals("64 B", Sizes.format(64));
        assertEquals("8 KiB", Sizes.format(8192));
        assertEquals("1 MiB", Sizes.format(1 << 20));
        assertThrows(IllegalArgumentException.class, () -> Sizes.parse("2M"));
        assertThrows(IllegalArgumentException.class, () -> Sizes.parse("4"));
    }

    @Test
    void unknownContendersAndOptionsAreRejected() {
        assertThrows(IllegalArgumentException.class, () -> BenchOptions.parse(new String[] {"--only", "zeromq"}));
        assertThrows(IllegalArgumentException.class, () -> BenchOptions.parse(new String[] {"--fast"}));
        assertEquals(List.of("netty", "rds4j-tcp"),
                BenchOptions.parse(new String[] {"--only", "netty,rds4j-tcp"}).only);
    }

    @Test
    void pinOptionIsParsed() {
        assertTrue(BenchOptions.parse(new String[] {"--pin", "--sizes", "64"}).pin);
        assertFalse(BenchOptions.parse(new String[] {"--sizes", "64"}).pin);
    }

    @Test
    void everythingAfterJmhGoesToJmh() {
        BenchOptions o = BenchOptions.parse(new String[] {"--jmh", "-f", "1", "RdsHeader"});
        assertEquals(List.of("-f", "1", "RdsHeader"), List.of(o.jmhArgs));
    }

    @Test
    void mediansAndSpreads() {
        List<CellResult> runs = List.of(cell(1_000_000_000L, 10_000), cell(900_000_000L, 11_000),
                cell(1_100_000_000L, 12_000));
        Row m = Row.median(runs);
        // 1000 messages in 1.0, 0.9, 1.1 s: median 1000 msgs/s; the fastest run is 11.1 % above it.
        assertEquals(1000, m.msgsPerSecond(), 1e-6);
        assertEquals(100.0 / 9, m.msgsSpreadPct(), 1e-6);
        assertEquals(11.0, m.p50Micros(), 1e-9);
        assertEquals(100.0 / 11, m.p50SpreadPct(), 1e-6);
    }

    private static CellResult cell(long nanos, long p50) {
        return new CellResult("rds4j-tcp", 64, null, 1000, nanos, 64_000, 1_000_000, 100, p50, p50, p50);
    }
}
