package org.rds4j.core.path;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;
import org.rds4j.core.stack.RdsCounters.Counter;
import org.rds4j.core.cong.CongestionMap;
import org.rds4j.core.wire.RdsHeader;

/**
 * The smaller host is poked by the larger while its path is up (Connection#peerPoked): a kernel before 7.0 placed our
 * connection on another of its paths and its messages for path 0 wait for a connection that never comes (CI,
 * scenario 11 on 6.12). If the peer sends nothing of its own on path 0 within a second of the poke, and nothing is
 * unacknowledged, the connection closes in order (FIN, no RST) and connects again; a poke racing the connection's
 * start (the peer's messages then arrive on it), or one while messages are unacknowledged, changes nothing.
 */
class MisplacedPathTest {
    private final FakeEnvironment env = new FakeEnvironment(7);
    private final FakeTransport transport = new FakeTransport(env.scheduler);
    private final Connection connection = new Connection(PathHarness.SMALL, PathHarness.LARGE, "fake", transport, env,
            new CongestionMap());

    private FakeTransport.FakeConnection up() {
        connection.peerPoked();                      // path 0 is down: it connects
        assertEquals(1, transport.pendingAttempts().size());
        FakeTransport.FakeConnection c = transport.connected(transport.pendingAttempts().get(0));
        assertEquals(PathState.UP, connection.path(0).state());
        return c;
    }

    /** The peer sends a message of its own (to a port nobody bound here) on {@code c}. */
    private static void peerSends(FakeTransport.FakeConnection c, long sequence, int sourcePort, int destinationPort) {
        peerSends(c, sequence, sourcePort, destinationPort, 0);
    }

    private static void peerSends(FakeTransport.FakeConnection c, long sequence, int sourcePort, int destinationPort,
            int flags) {
        ByteBuffer b = ByteBuffer.allocate(RdsHeader.SIZE);
        new RdsHeader().sequence(sequence).sourcePort(sourcePort).destinationPort(destinationPort).flags(flags)
                .encode(b);
        c.handler.onBytes(b.flip());
    }

    @Test
    void aPokeRacingTheStartIsFollowedByThePeersMessagesAndChangesNothing() {
        FakeTransport.FakeConnection c = up();
        connection.peerPoked();
        peerSends(c, 1, PathHarness.DPORT, PathHarness.SPORT);     // the peer took our connection for path 0
        env.scheduler.advanceBy(PathPlacement.POKE_CHECK_NANOS * PathPlacement.POKE_CHECKS);
        assertEquals(0, c.closeCalls + c.abortCalls, c.toString());
        assertEquals(PathState.UP, connection.path(0).state());
    }

    @Test
    void aPokeWithNothingFromThePeerAfterItClosesThePathInOrderToBePlacedAgain() {
        FakeTransport.FakeConnection c = up();
        peerSends(c, 1, PathHarness.DPORT, PathHarness.SPORT);     // before the poke: does not count
        connection.peerPoked();
        connection.peerPoked();                                      // a blocked sender pokes a few times at once
        env.scheduler.advanceBy(PathPlacement.POKE_CHECK_NANOS - 1);
        assertEquals(0, c.closeCalls + c.abortCalls, "not before the check: " + c);
        env.scheduler.advanceBy(1);
        assertEquals(1, c.closeCalls, "an orderly close: " + c);
        assertEquals(0, c.abortCalls, "no reset, which can wedge 6.1 and 6.12 paths: " + c);
        assertEquals(PathState.DISCONNECTING, connection.path(0).state());
    }

    @Test
    void aPathWithMessagesUnacknowledgedIsLeftAlone() {
        FakeTransport.FakeConnection c = up();
        connection.path(0).enqueue(new OutgoingMessage(PathHarness.SPORT, PathHarness.DPORT,
                ByteBuffer.allocate(8), new PathHarness.Owner(), null, false));
        c.handler.transmit(new PathHarness.RecordingSink(c, 64));
        connection.peerPoked();
        env.scheduler.advanceBy(PathPlacement.POKE_CHECK_NANOS * 2);  // two checks; the ack timeout is longer
        assertEquals(0, c.closeCalls + c.abortCalls, "a resend on a new connection could be taken twice: " + c);
    }

    @Test
    void theNextConnectionTakesThePeersNumbersFromTheStart() {
        FakeTransport.FakeConnection c = up();
        for (long seq = 1; seq <= 14; seq++) {
            peerSends(c, seq, PathHarness.DPORT, PathHarness.SPORT);   // the numbers of the peer's other path
        }
        connection.peerPoked();
        env.scheduler.advanceBy(PathPlacement.POKE_CHECK_NANOS);
        assertEquals(1, c.closeCalls, c.toString());
        c.closedDelivered = true;
        c.handler.onClosed(null);
        env.scheduler.advanceBy(PathPlacement.POKE_CHECK_NANOS);      // the reconnect, well within its backoff
        FakeTransport.FakeConnection again = transport.connected(transport.pendingAttempts().get(0));
        assertEquals(PathState.UP, connection.path(0).state());
        long dropped = env.counters.get(Counter.RECV_DROP_OLD_SEQ);
        // The peer's first message for path 0, which it had written to a poke we refused unread: marked resent.
        peerSends(again, 1, PathHarness.DPORT, PathHarness.SPORT, RdsHeader.FLAG_RETRANSMITTED);
        assertEquals(dropped, env.counters.get(Counter.RECV_DROP_OLD_SEQ), "taken as new, not as a duplicate");
    }
}
