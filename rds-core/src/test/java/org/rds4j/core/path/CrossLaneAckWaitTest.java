package org.rds4j.core.path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import org.junit.jupiter.api.Test;

/**
 * Under caller I/O an acknowledgement nobody asked for waits longer while the replies leave on other lanes: each wait
 * that ends without a frame on its own path, while traffic went back on another, doubles the next, up to
 * {@link Acknowledgements#CROSS_LANE_DOUBLINGS} times; a reply on the path itself, or one-way traffic, brings the
 * wait back to {@link Acknowledgements#ACK_ONLY_DELAY_NANOS}. Without caller I/O it is always the short wait. One
 * path's {@link Acknowledgements}, virtual time.
 */
class CrossLaneAckWaitTest {
    private final FakeEnvironment env = new FakeEnvironment(5);
    private long now = 1_000_000;
    private long dataPasses;

    /**
     * One read that makes an acknowledgement owed; returns the wait it started. If {@code replyElsewhere}, a reply
     * leaves on another lane meanwhile; the wait then ends at its deadline with the ack-only message, which is written.
     */
    private long readAndMissTheWait(Acknowledgements acks, boolean replyElsewhere) {
        acks.received(false, false);
        assertNull(acks.ackOnlyIfWanted(true, false, now, dataPasses), "an acknowledgement nobody asked for waits");
        long wait = acks.dueInNanos(now);
        if (replyElsewhere) {
            dataPasses++;
        }
        now += wait;
        OutgoingMessage ackOnly = acks.ackOnlyIfDue(false, now, dataPasses);
        assertNotNull(ackOnly, "no frame on this path carried it: the ack-only message goes at the deadline");
        acks.wrote(ackOnly);
        return wait;
    }

    @Test
    void underCallerIoTheWaitDoublesWhileRepliesTakeOtherLanes() {
        Acknowledgements acks = new Acknowledgements(env, PathHarness.SMALL, "test", true);
        long expected = Acknowledgements.ACK_ONLY_DELAY_NANOS;
        for (int i = 0; i <= Acknowledgements.CROSS_LANE_DOUBLINGS; i++) {
            assertEquals(expected, readAndMissTheWait(acks, true), "wait " + i);
            expected *= 2;
        }
        long longest = Acknowledgements.ACK_ONLY_DELAY_NANOS << Acknowledgements.CROSS_LANE_DOUBLINGS;
        assertEquals(longest, readAndMissTheWait(acks, true), "and no further");

        // A reply on this very path carries the acknowledgement: waiting pays here, and the next wait is short.
        acks.received(false, false);
        assertNull(acks.ackOnlyIfWanted(true, false, now, dataPasses));
        assertEquals(longest, acks.dueInNanos(now));
        now += 1_000;
        assertNull(acks.ackOnlyIfDue(true, now, dataPasses), "a frame queued on the path carries it");
        assertEquals(Acknowledgements.ACK_ONLY_DELAY_NANOS, readAndMissTheWait(acks, true));
        assertEquals(2 * Acknowledgements.ACK_ONLY_DELAY_NANOS, readAndMissTheWait(acks, true));

        // Nothing went back at all (one-way traffic): the short wait again.
        assertEquals(4 * Acknowledgements.ACK_ONLY_DELAY_NANOS, readAndMissTheWait(acks, false));
        assertEquals(Acknowledgements.ACK_ONLY_DELAY_NANOS, readAndMissTheWait(acks, true));
    }

    @Test
    void withoutCallerIoTheWaitStaysShort() {
        Acknowledgements acks = new Acknowledgements(env, PathHarness.SMALL, "test", false);
        for (int i = 0; i < 3 * Acknowledgements.CROSS_LANE_DOUBLINGS; i++) {
            assertEquals(Acknowledgements.ACK_ONLY_DELAY_NANOS, readAndMissTheWait(acks, true), "wait " + i);
        }
    }
}
