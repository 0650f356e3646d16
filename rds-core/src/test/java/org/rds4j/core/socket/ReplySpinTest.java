package org.rds4j.core.socket;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.LongRange;
import org.junit.jupiter.api.Test;

/**
 * The default mode's choice between yielding and parking for a reply ({@link ReplySpin}): only the first wait after a
 * send counts as one for a reply, and readers stop yielding once replies take longer than the window on average,
 * and start again once they are fast again.
 */
class ReplySpinTest {

    @Test
    void onlyTheFirstWaitAfterASendAwaitsAReply() {
        ReplySpin spin = new ReplySpin(1_000);
        assertFalse(spin.awaitsReply(0), "nothing sent yet: a one-way reader");
        assertTrue(spin.awaitsReply(1), "a send since the last wait");
        assertFalse(spin.awaitsReply(1), "the same send does not make a second wait one for a reply");
        assertTrue(spin.awaitsReply(5), "several sends since");
        assertTrue(spin.awaitsReply(Integer.MIN_VALUE), "the count wraps: only a change matters");
    }

    @Test
    void aZeroWindowNeverYields() {
        ReplySpin spin = new ReplySpin(0);
        assertFalse(spin.awaitsReply(1), "no window: no wait is timed");
        assertFalse(spin.worthSpinning(), "and none yields");
        assertThrows(IllegalArgumentException.class, () -> new ReplySpin(-1));
    }

    @Test
    void oneSlowReplyStopsTheYieldingAndFastOnesBringItBack() {
        ReplySpin spin = new ReplySpin(1_000);
        assertTrue(spin.worthSpinning(), "no reply timed yet: worth a try");
        spin.replied(4_004);                                  // a quarter of it: just past the window
        assertEquals(1_001, spin.replyNanos());
        assertFalse(spin.worthSpinning(), "replies now take longer than the window on average");
        spin.replied(0);
        assertTrue(spin.replyNanos() <= 1_000, "a fast reply brings the average back within the window");
        assertTrue(spin.worthSpinning());
    }

    @Test
    void aShareOfTheWindowYieldsOnlyWhileWaitsAverageWithinThatShare() {
        ReplySpin spin = new ReplySpin(1_000, 250);
        assertTrue(spin.worthSpinning(), "no wait timed yet: worth a try");
        spin.replied(1_004);                                  // a quarter of it: just past the share
        assertEquals(251, spin.replyNanos());
        assertFalse(spin.worthSpinning(), "waits within the window, but past the share, on average");
        assertEquals(1_000, spin.window(), "a wait that does yield still yields for the whole window");
        spin.replied(0);
        assertTrue(spin.worthSpinning(), "a fast wait brings the average back within the share");
        assertThrows(IllegalArgumentException.class, () -> new ReplySpin(1_000, 1_001));
        assertThrows(IllegalArgumentException.class, () -> new ReplySpin(1_000, -1));
    }

    @Property(tries = 200)
    void theAverageStaysBetweenTheFastestAndSlowestReply(@ForAll long seed,
                                                         @ForAll @LongRange(min = 1, max = 1_000_000) long window) {
        Random random = new Random(seed);
        ReplySpin spin = new ReplySpin(window);
        long min = Long.MAX_VALUE;
        long max = 0;
        for (int step = 0; step < 500; step++) {
            long t = random.nextInt(4) == 0 ? random.nextInt(10 * (int) window) : random.nextInt((int) window + 1);
            spin.replied(t);
            min = Math.min(min, t);
            max = Math.max(max, t);
            String where = "seed " + seed + ", window " + window + ", step " + step;
            assertTrue(spin.replyNanos() <= max, where + ": above the slowest reply, " + spin.replyNanos());
            assertTrue(spin.replyNanos() >= 0, where + ": negative, " + spin.replyNanos());
            assertEquals(spin.replyNanos() <= window, spin.worthSpinning(), where + ": yields iff within the window");
        }
        for (int step = 0; step < 64; step++) {
            spin.replied(min);
        }
        assertTrue(spin.replyNanos() - min <= 3, "seed " + seed + ": settles on a steady reply time, "
                + spin.replyNanos() + " against " + min);
    }
}
