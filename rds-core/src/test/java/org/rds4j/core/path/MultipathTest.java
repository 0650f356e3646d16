package org.rds4j.core.path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.rds4j.core.stack.RdsCounters;
import org.rds4j.core.cong.CongestionMap;

/** The multipath agreement: lanes from the two offers, the lane hash, and path 0's catch-up when the lanes open. */
class MultipathTest {
    private final FakeEnvironment env = new FakeEnvironment(1);
    private final Connection connection = connection();

    private Connection connection() {
        try {
            return new Connection(InetAddress.getByName("10.0.0.1"), InetAddress.getByName("10.0.0.2"), "fake",
                    new FakeTransport(env.scheduler), env, new CongestionMap());
        } catch (java.io.IOException e) {
            throw new AssertionError(e);
        }
    }

    @Property
    void theSmallerOfferRoundedDownToAPowerOfTwoIsUsed(@ForAll @IntRange(min = 0, max = 300) int peerOffer,
                                                        @ForAll("offers") int ours) {
        Multipath mp = new Multipath(connection, ours);
        mp.peerOffered(peerOffer, true, true);
        int peer = peerOffer <= 0 ? 1 : Math.min(peerOffer, 8);
        assertEquals(Integer.highestOneBit(Math.min(peer, ours)), mp.lanes());
        for (int port = 0; port < 65536; port += 997) {
            int lane = mp.laneFor(port);
            assertTrue(lane >= 0 && lane < mp.lanes(), "lane " + lane);
            assertEquals(lane, mp.laneFor(port), "one port, one lane");
        }
    }

    @net.jqwik.api.Provide
    net.jqwik.api.Arbitrary<Integer> offers() {
        return net.jqwik.api.Arbitraries.of(1, 2, 4, 8);
    }

    @Example
    void portsSpreadOverTheLanes() {
        Multipath mp = new Multipath(connection, 8);
        mp.peerOffered(8, false, true);
        boolean[] used = new boolean[8];
        for (int port = 4000; port < 4016; port++) {
            used[mp.laneFor(port)] = true;
        }
        int n = 0;
        for (boolean u : used) {
            n += u ? 1 : 0;
        }
        assertTrue(n >= 5, "16 consecutive ports use most of the 8 lanes, used " + n);
    }

    /**
     * The initiator opens its extra paths only on the peer's pong to its probe, which proves the peer read our offer
     * (and SPORT_IDX) first; the peer's own probe agrees the lanes but does not let them connect yet.
     */
    @Example
    void theExtraPathsWaitForThePongNotThePeersProbe() {
        Multipath mp = new Multipath(connection, 8);
        assertFalse(mp.peerOffered(8, true, false), "the peer's probe: lanes agreed, not confirmed");
        assertEquals(8, mp.lanes());
        assertFalse(mp.confirmed());
        assertTrue(mp.peerOffered(8, true, true), "the pong: go");
        assertTrue(mp.confirmed());
        mp.path0Down();
        assertFalse(mp.peerOffered(8, true, false), "a new path 0: the peer's probe alone is not enough");
        assertTrue(mp.peerOffered(8, true, true), "its pong is");
    }

    /**
     * Messages pushed onto path 0 before the lanes opened, and not yet numbered, belong to the catch-up: the other
     * lanes wait until they are acknowledged too. (They once did not: a socket's first messages were overtaken.)
     */
    @Example
    void theCatchUpCoversMessagesStillInPathZerosInbox() {
        Multipath mp = new Multipath(connection, 8);
        SendQueue queue = new SendQueue(connection.peer(), new RdsCounters());
        for (int i = 0; i < 3; i++) {
            queue.push(OutgoingMessage.ping(5000));           // pushed, not yet taken in
        }
        assertTrue(mp.peerOffered(8, true, true), "the lanes open");
        assertTrue(mp.catchingUp());
        assertFalse(mp.path0Progress(queue), "path 0 has 3 messages outstanding");
        assertTrue(mp.catchingUp(), "the other lanes hold");
        queue.takeInbox();
        OutgoingMessage last = null;
        for (OutgoingMessage m = queue.firstUnsent(); m != null; m = m.next) {
            last = m;                                         // as a transmit pass writes them all
        }
        queue.wrote(last, null);
        queue.releaseUpTo(2);
        assertFalse(mp.path0Progress(queue), "message 3 is still outstanding");
        queue.releaseUpTo(3);
        assertTrue(mp.path0Progress(queue), "all acknowledged: the catch-up ends");
        assertFalse(mp.catchingUp());
        assertFalse(mp.peerOffered(8, true, true), "the same offer again changes nothing");
        assertFalse(mp.catchingUp());
    }

    /**
     * A sender that chose path 0 while there was one lane may push only after the lanes opened and path 0 took its
     * catch-up target, even after the catch-up ended: its message is then not covered, and the socket's next message,
     * on its new lane, could overtake it (the contract test saw message 2 before message 1). Such a sender sees the
     * lanes open after its push, and the catch-up starts again with a target that counts its message.
     */
    @Example
    void aMessagePushedOntoPathZeroAfterTheCatchUpTookItsTargetStartsItAgain() {
        Multipath mp = new Multipath(connection, 8);
        SendQueue queue = new SendQueue(connection.peer(), new RdsCounters());
        int moved = portOnLane(false);
        int stays = portOnLane(true);
        queue.push(OutgoingMessage.ping(5000));
        assertTrue(mp.peerOffered(8, true, true), "the lanes open");
        assertFalse(mp.path0Progress(queue), "path 0 takes its target: message 1");
        writeAll(queue);
        queue.releaseUpTo(1);
        assertTrue(mp.path0Progress(queue), "message 1 acknowledged: the catch-up ends");

        queue.push(OutgoingMessage.ping(5000));               // the late sender's message, chosen for path 0 before
        assertFalse(mp.cameLate(stays), "a socket whose lane is 0 keeps its order on path 0");
        assertTrue(mp.cameLate(moved), "a socket on another lane now must wait for it");
        mp.restartCatchUp(queue, true);
        assertTrue(mp.catchingUp(), "the other lanes hold again");
        assertFalse(mp.path0Progress(queue), "message 2 is outstanding");
        writeAll(queue);
        queue.releaseUpTo(2);
        assertTrue(mp.path0Progress(queue), "message 2 acknowledged: the catch-up ends");
        assertFalse(mp.catchingUp());
    }

    /** A port whose lane among 8 is 0, or is not. */
    private static int portOnLane(boolean zero) {
        for (int port = 4000; port < 5000; port++) {
            if ((Connection.laneOf(port, 8) == 0) == zero) {
                return port;
            }
        }
        throw new AssertionError("no port found");
    }

    private static void writeAll(SendQueue queue) {
        queue.takeInbox();
        OutgoingMessage last = null;
        for (OutgoingMessage m = queue.firstUnsent(); m != null; m = m.next) {
            last = m;                                         // as a transmit pass writes them all
        }
        queue.wrote(last, null);
    }
}
