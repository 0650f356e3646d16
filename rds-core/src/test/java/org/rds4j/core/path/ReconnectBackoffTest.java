package org.rds4j.core.path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;

/** The reconnect delay (docs/protocol.md, "Connections"; net/rds/threads.c): immediate first, then uniform below a ceiling doubling from min to max. */
class ReconnectBackoffTest {

    /** The bound handed to the random source is the ceiling: min, 2·min, 4·min, … capped at max. */
    @Example
    void ceilingDoublesFromMinToMax() {
        List<Long> bounds = new ArrayList<>();
        ReconnectBackoff b = new ReconnectBackoff(100, 1000, n -> {
            bounds.add(n);
            return n - 1;
        });
        assertEquals(0, b.ceilingNanos());
        assertEquals(0, b.nextDelayNanos(), "the first reconnect is immediate");
        assertEquals(100, b.ceilingNanos());
        List<Long> delays = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            delays.add(b.nextDelayNanos());
        }
        assertEquals(List.of(100L, 200L, 400L, 800L, 1000L, 1000L), bounds);
        assertEquals(List.of(99L, 199L, 399L, 799L, 999L, 999L), delays, "the delay is what the source returns");
        assertEquals(1000, b.ceilingNanos());
    }

    /** The path came up — the ceiling goes back to 0, so the next reconnect is immediate again. */
    @Example
    void resetMakesTheNextReconnectImmediate() {
        ReconnectBackoff b = new ReconnectBackoff(1_000_000, 1_000_000_000, n -> n / 2);
        b.nextDelayNanos();
        b.nextDelayNanos();
        b.nextDelayNanos();
        assertEquals(4_000_000, b.ceilingNanos());
        b.reset();
        assertEquals(0, b.ceilingNanos());
        assertEquals(0, b.nextDelayNanos());
        assertEquals(500_000, b.nextDelayNanos(), "and the ceiling starts over at min");
    }

    /** With a real uniform source every delay after the first is in [0, ceiling), the ceiling never above max. */
    @Property(tries = 200)
    void delaysStayBelowTheCeiling(@ForAll @LongRange(min = 1, max = 1_000_000_000L) long min,
            @ForAll @IntRange(min = 0, max = 40) int doublings, @ForAll Random rnd,
            @ForAll @IntRange(min = 1, max = 50) int attempts) {
        long max = Math.min(Long.MAX_VALUE / 4, min << Math.min(doublings, 20));
        ReconnectBackoff b = new ReconnectBackoff(min, max, n -> (rnd.nextLong() & Long.MAX_VALUE) % n);
        assertEquals(0, b.nextDelayNanos());
        long ceiling = min;
        for (int i = 0; i < attempts; i++) {
            assertEquals(ceiling, b.ceilingNanos());
            long d = b.nextDelayNanos();
            assertTrue(d >= 0 && d < ceiling, d + " not in [0, " + ceiling + ")");
            ceiling = Math.min(ceiling * 2, max);
            assertTrue(b.ceilingNanos() <= max);
        }
    }

    /**
     * A maximum of Long.MAX_VALUE ("no cap") must keep the ceiling positive. BUG (low severity): doubling a ceiling
     * above Long.MAX_VALUE / 2 overflows to a negative number, which min(…, max) keeps, and the random source is
     * then asked for a value below a negative bound.
     */
    @Example
    void ceilingDoesNotOverflowWithAnUncappedMaximum() {
        List<Long> bounds = new ArrayList<>();
        ReconnectBackoff b = new ReconnectBackoff(1, Long.MAX_VALUE, n -> {
            bounds.add(n);
            return 0;
        });
        b.nextDelayNanos();
        for (int i = 0; i < 70; i++) {
            b.nextDelayNanos();
            assertTrue(b.ceilingNanos() > 0, "ceiling " + b.ceilingNanos() + " after " + (i + 1) + " doublings");
        }
        assertTrue(bounds.stream().allMatch(n -> n > 0), "the random source is only asked for positive bounds");
    }

    @Example
    void rejectsBadBounds() {
        assertThrows(IllegalArgumentException.class, () -> new ReconnectBackoff(0, 10, n -> 0));
        assertThrows(IllegalArgumentException.class, () -> new ReconnectBackoff(-1, 10, n -> 0));
        assertThrows(IllegalArgumentException.class, () -> new ReconnectBackoff(10, 9, n -> 0));
    }
}
