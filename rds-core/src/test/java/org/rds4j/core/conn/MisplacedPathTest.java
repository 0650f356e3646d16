package org.rds4j.core.conn;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;
import org.rds4j.core.cong.CongestionMap;

/**
 * The smaller host is poked by the larger while its path is up (Connection#peerPoked): a kernel before 7.0 placed our
 * connection on another of its paths and sends on one that has none (CI, scenario 11 on 6.12). After the path has
 * been up for a while with nothing unacknowledged, the connection closes in order (FIN, no RST) and connects again;
 * a poke racing the connection's start, or one while messages are unacknowledged, changes nothing.
 */
class MisplacedPathTest {
    private final FakeEnvironment env = new FakeEnvironment(7);
    private final FakeTransport transport = new FakeTransport();
    private final Connection connection = new Connection(PathHarness.SMALL, PathHarness.LARGE, "fake", transport, env,
            new CongestionMap());

    private FakeTransport.FakeConnection up() {
        connection.peerPoked();                      // path 0 is down: it connects
        assertEquals(1, transport.pendingAttempts().size());
        FakeTransport.FakeConnection c = transport.connected(transport.pendingAttempts().get(0));
        assertEquals(PathState.UP, connection.path(0).state());
        return c;
    }

    @Test
    void aPokeSoonAfterThePathCameUpIsARaceAndChangesNothing() {
        FakeTransport.FakeConnection c = up();
        env.scheduler.advanceBy(Connection.MISPLACED_AFTER_NANOS / 2);
        connection.peerPoked();
        assertEquals(0, c.closeCalls + c.abortCalls, c.toString());
        assertEquals(PathState.UP, connection.path(0).state());
    }

    @Test
    void aPokeToAPathUpForAWhileClosesItInOrderToBePlacedAgain() {
        FakeTransport.FakeConnection c = up();
        env.scheduler.advanceBy(Connection.MISPLACED_AFTER_NANOS);
        connection.peerPoked();
        assertEquals(1, c.closeCalls, "an orderly close: " + c);
        assertEquals(0, c.abortCalls, "no reset, which can wedge 6.1 and 6.12 paths: " + c);
        assertEquals(PathState.DISCONNECTING, connection.path(0).state());
    }

    @Test
    void aPathWithMessagesUnacknowledgedIsLeftAlone() {
        FakeTransport.FakeConnection c = up();
        connection.path(0).enqueue(new OutgoingMessage(PathHarness.SPORT, PathHarness.DPORT,
                java.nio.ByteBuffer.allocate(8), new PathHarness.Owner(), null, false));
        c.handler.transmit(new PathHarness.RecordingSink(c, 64));
        env.scheduler.advanceBy(Connection.MISPLACED_AFTER_NANOS);
        connection.peerPoked();
        assertEquals(0, c.closeCalls + c.abortCalls, "a resend on a new connection could be taken twice: " + c);
    }
}
