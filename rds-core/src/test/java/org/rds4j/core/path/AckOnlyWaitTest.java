package org.rds4j.core.path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.rds4j.core.stack.RdsCounters.Counter;
import org.rds4j.core.wire.RdsHeader;

/**
 * An acknowledgement the peer did not ask for waits {@link Acknowledgements#ACK_ONLY_DELAY_NANOS} for a reply to
 * carry it, on a transport that can bring a pass at a deadline; the ack-only message goes only if none did. One the
 * peer asked for (ACK_REQUIRED), or on a transport that cannot wait, goes at once. Virtual time, one thread.
 */
class AckOnlyWaitTest {
    private PathHarness h;
    private FakeTransport.FakeConnection c;

    /** Path 0 up towards an rds4j peer (one that acknowledges), everything written, nothing owed either way. */
    @BeforeEach
    void pathUpTowardsAnAcknowledgingPeer() {
        h = new PathHarness(true, 7);
        h.enqueue(16);
        c = h.connectSucceeds(h.transport.attempts.get(0));
        h.transmit(c, 16);
        h.ack(c, h.path.queue().newestSent());
        assertTrue(h.connection.peerAcks().acknowledges(), "the peer's h_ack shows that it acknowledges");
        assertEquals(List.of(), h.transmit(c, 16), "nothing left to write");
        c.keepsDeadlines = true;
    }

    @Test
    void anAcknowledgementNobodyAskedForWaitsAndAReplyCarriesIt() {
        int passes = c.transmitRequests;
        long peerSeq = peerSends(0);
        assertEquals(1, c.delayedRequests, "a pass is asked for at the deadline");
        assertEquals(Acknowledgements.ACK_ONLY_DELAY_NANOS, c.lastDelayNanos);
        assertEquals(passes, c.transmitRequests, "no pass now for the acknowledgement");
        assertTrue(h.path.acks().waiting());
        assertEquals(List.of(), pass(), "a pass before the deadline writes no ack-only message");
        assertEquals(2, c.delayedRequests, "and has the transport come back at the deadline");

        h.path.enqueue(message());                  // the reply
        List<PathHarness.RecordingSink.Frame> frames = pass();
        assertEquals(1, frames.size(), "the reply goes: " + frames);
        assertEquals(peerSeq, frames.get(0).ack(), "and carries the acknowledgement");
        assertFalse(h.path.acks().waiting(), "so nothing waits any more");

        long acksSent = h.env.counters.get(Counter.ACK_SENT);
        h.env.scheduler.advanceBy(Acknowledgements.ACK_ONLY_DELAY_NANOS);
        assertEquals(List.of(), pass(), "the pass at the deadline has nothing to write");
        assertEquals(acksSent, h.env.counters.get(Counter.ACK_SENT), "no ack-only message went");
    }

    @Test
    void withoutAReplyTheAckOnlyMessageGoesAtTheDeadline() {
        long peerSeq = peerSends(0);
        h.env.scheduler.advanceBy(Acknowledgements.ACK_ONLY_DELAY_NANOS - 1);
        assertEquals(List.of(), pass(), "one nanosecond early: nothing");
        assertEquals(2, c.delayedRequests, "the early pass has the transport come back at the deadline");
        assertEquals(1, c.lastDelayNanos, "which is a nanosecond away");
        peerSends(0);                                // a second message does not move the deadline
        assertEquals(2, c.delayedRequests, "nor does it ask for another pass: one wait, not one per read");
        long acksSent = h.env.counters.get(Counter.ACK_SENT);
        h.env.scheduler.advanceBy(1);
        List<PathHarness.RecordingSink.Frame> frames = pass();
        assertEquals(1, frames.size(), "the ack-only message goes: " + frames);
        PathHarness.RecordingSink.Frame f = frames.get(0);
        assertEquals(0, f.sport());
        assertEquals(0, f.dport());
        assertEquals(peerSeq + 1, f.ack(), "covering both messages");
        assertEquals(acksSent + 1, h.env.counters.get(Counter.ACK_SENT));
        assertFalse(h.path.acks().waiting());
    }

    @Test
    void aReplyThatComesLateNowAndThenDoesNotStopTheWaiting() {
        for (int i = 1; i < 3 * Acknowledgements.MISSED_FOR_ONE_WAY; i++) {
            peerSends(0);
            assertEquals(i, c.delayedRequests, "read " + i + " waits");
            if (i % Acknowledgements.MISSED_FOR_ONE_WAY == 0) {
                h.path.enqueue(message());           // a reply in time
            } else {
                h.env.scheduler.advanceBy(Acknowledgements.ACK_ONLY_DELAY_NANOS);
            }
            assertEquals(1, pass().size());
        }
    }

    @Test
    void trafficBackOnAnotherLaneKeepsTheAcknowledgementsWaiting() {
        for (int i = 1; i <= 2 * Acknowledgements.MISSED_FOR_ONE_WAY; i++) {
            peerSends(0);
            assertEquals(i, c.delayedRequests, "read " + i + " waits");
            h.connection.wroteData();                // a socket's reply left on another path meanwhile
            h.env.scheduler.advanceBy(Acknowledgements.ACK_ONLY_DELAY_NANOS);
            assertEquals(1, pass().size(), "this path's ack-only message goes at its deadline");
        }
    }

    @Test
    void anAcknowledgementThePeerAskedForGoesAtOnce() {
        int passes = c.transmitRequests;
        long peerSeq = peerSends(RdsHeader.FLAG_ACK_REQUIRED);
        assertEquals(0, c.delayedRequests, "nothing waits");
        assertEquals(passes + 1, c.transmitRequests, "a pass now");
        List<PathHarness.RecordingSink.Frame> frames = pass();
        assertEquals(1, frames.size(), frames.toString());
        assertEquals(peerSeq, frames.get(0).ack());
    }

    @Test
    void onATransportThatKeepsNoDeadlineTheAckOnlyMessageGoesAtOnce() {
        c.keepsDeadlines = false;
        int passes = c.transmitRequests;
        long peerSeq = peerSends(0);
        assertEquals(passes + 1, c.transmitRequests, "a pass now, as the transport cannot come back later");
        assertFalse(h.path.acks().waiting());
        List<PathHarness.RecordingSink.Frame> frames = pass();
        assertEquals(1, frames.size(), frames.toString());
        assertEquals(0, frames.get(0).dport());
        assertEquals(peerSeq, frames.get(0).ack());
    }

    @Test
    void theMaintenanceTickSendsAnAckOnlyMessageWhoseDeadlineWasMissed() {
        long peerSeq = peerSends(0);
        int passes = c.transmitRequests;
        h.env.scheduler.advanceBy(Liveness.MAINTENANCE_PERIOD_NANOS);  // the transport never came back
        assertTrue(c.transmitRequests > passes, "the tick asks for a pass");
        List<PathHarness.RecordingSink.Frame> frames = pass();
        assertEquals(1, frames.size(), frames.toString());
        assertEquals(peerSeq, frames.get(0).ack());
    }

    @Test
    void oneWayTrafficGetsItsAckOnlyMessagesAtOnceAndWaitsAgainOnceInAWhile() {
        for (int i = 1; i <= Acknowledgements.MISSED_FOR_ONE_WAY; i++) {
            peerSends(0);
            assertEquals(i, c.delayedRequests, "wait " + i + " of those missed in a row");
            h.env.scheduler.advanceBy(Acknowledgements.ACK_ONLY_DELAY_NANOS);
            assertEquals(1, pass().size(), "no reply came: the ack-only message went at the deadline");
        }
        int waits = c.delayedRequests;
        for (int i = 1; i < Acknowledgements.WAIT_PROBE; i++) {
            int passes = c.transmitRequests;
            long seq = peerSends(0);
            assertEquals(passes + 1, c.transmitRequests, "read " + i + " of one-way traffic: a pass at once");
            List<PathHarness.RecordingSink.Frame> frames = pass();
            assertEquals(1, frames.size(), frames.toString());
            assertEquals(seq, frames.get(0).ack());
        }
        assertEquals(waits, c.delayedRequests, "no wait meanwhile");
        peerSends(0);
        assertEquals(waits + 1, c.delayedRequests, "once in " + Acknowledgements.WAIT_PROBE + " reads it waits");
        h.path.enqueue(message());
        assertEquals(1, pass().size(), "and a reply carries the acknowledgement");
        peerSends(0);
        assertEquals(waits + 2, c.delayedRequests, "so the next one waits too");
    }

    /** The peer sends one empty data message with {@code flags}; returns its sequence number. */
    private long peerSends(int flags) {
        long seq = h.mPeerSeq++;
        ByteBuffer b = ByteBuffer.allocate(RdsHeader.SIZE);
        new RdsHeader().sequence(seq).sourcePort(PathHarness.DPORT).destinationPort(PathHarness.SPORT).flags(flags)
                .encode(b);
        b.flip();
        c.handler.onBytes(b);
        return seq;
    }

    private List<PathHarness.RecordingSink.Frame> pass() {
        PathHarness.RecordingSink sink = new PathHarness.RecordingSink(c, 16);
        c.handler.transmit(sink);
        return sink.frames;
    }

    private OutgoingMessage message() {
        return new OutgoingMessage(PathHarness.SPORT, PathHarness.DPORT, ByteBuffer.allocate(8), h.owner, null, false);
    }
}
