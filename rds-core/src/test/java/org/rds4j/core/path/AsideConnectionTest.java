package org.rds4j.core.path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;
import org.rds4j.core.cong.CongestionMap;
import org.rds4j.core.spi.ConnectionHandler;
import org.rds4j.core.stack.RdsCounters.Counter;
import org.rds4j.core.wire.RdsHeader;

/**
 * A connection the peer opens when no path is free for it waits aside, unread, and takes the path that frees
 * (PathPlacement#accept): the peer may already have sent on it, and a reset would lose what TCP acknowledged there.
 * Only a connection still waiting at the limit is reset, as a refusal.
 */
class AsideConnectionTest {
    private final FakeEnvironment env = new FakeEnvironment(11);
    private final FakeTransport transport = new FakeTransport(env.scheduler);
    private Connection connection;

    /** We are the larger address: the peer connects to us. */
    private Connection acceptor(int paths) {
        env.paths = paths;
        connection = new Connection(PathHarness.LARGE, PathHarness.SMALL, "fake", transport, env, new CongestionMap());
        return connection;
    }

    private FakeTransport.FakeConnection incoming() {
        FakeTransport.FakeConnection c = transport.newConnection(false, PathHarness.LARGE, PathHarness.SMALL);
        c.handler = connection.accept(c);
        return c;
    }

    /** The peer's message {@code sequence} to a port nobody bound here: counted as dropped when decoded. */
    private static ByteBuffer message(long sequence) {
        ByteBuffer b = ByteBuffer.allocate(RdsHeader.SIZE);
        new RdsHeader().sequence(sequence).sourcePort(PathHarness.DPORT).destinationPort(PathHarness.SPORT)
                .encode(b);
        return b.flip();
    }

    private static void closedByPeer(FakeTransport.FakeConnection c) {
        c.closedDelivered = true;
        c.handler.onClosed(new IOException("Connection reset by peer"));
    }

    private TransportOf path0() {
        return new TransportOf(connection.path(0));
    }

    private record TransportOf(ConnectionPath path) {
        Object transport() {
            PathConnection pc = path.upConnection();
            return pc == null ? null : pc.transport();
        }
    }

    @Test
    void aConnectionForABusyPathWaitsUnreadAndTakesThePathWhenItsOldConnectionCloses() {
        acceptor(1);
        FakeTransport.FakeConnection first = incoming();
        assertNotNull(first.handler);
        FakeTransport.FakeConnection second = incoming();
        assertNotNull(second.handler, "not refused");
        assertFalse(second.readable, "not read while it waits");
        assertEquals(0, second.abortCalls + second.closeCalls, second.toString());
        assertEquals(1, env.counters.get(Counter.CONN_ACCEPT_DEFERRED));
        assertSame(first, path0().transport());

        closedByPeer(first);
        assertEquals(PathState.UP, connection.path(0).state(), "the waiting connection took the path");
        assertSame(second, path0().transport());
        assertTrue(second.readable, "read from now on");
        long dropped = env.counters.get(Counter.RECV_DROP_NO_SOCK);
        second.handler.onBytes(message(1));
        assertEquals(dropped + 1, env.counters.get(Counter.RECV_DROP_NO_SOCK), "its bytes reach the path");
        assertEquals(0, env.counters.get(Counter.CONN_ACCEPT_REFUSED));
    }

    @Test
    void theConnectionInTheWayIsPingedSoThatADeadOneShowsItself() {
        acceptor(1);
        FakeTransport.FakeConnection first = incoming();
        long pings = env.counters.get(Counter.ACK_PING_SENT);
        int requests = first.transmitRequests;
        incoming();
        assertEquals(pings + 1, env.counters.get(Counter.ACK_PING_SENT), "a ping queued on path 0");
        assertTrue(first.transmitRequests > requests, "and a pass asked for on its connection");
    }

    @Test
    void aConnectionStillWaitingAtTheLimitIsResetAsARefusal() {
        acceptor(1);
        incoming();
        FakeTransport.FakeConnection second = incoming();
        env.scheduler.advanceBy(PathPlacement.ASIDE_LIMIT_NANOS - 1);
        assertEquals(0, second.abortCalls, "not before the limit");
        env.scheduler.advanceBy(1);
        assertEquals(1, second.abortCalls, second.toString());
        assertEquals(1, env.counters.get(Counter.CONN_ACCEPT_REFUSED));
        second.closedDelivered = true;
        second.handler.onClosed(null);                 // the transport's report of the reset changes nothing
        assertEquals(PathState.UP, connection.path(0).state());
    }

    @Test
    void aConnectionForALaneNotYetAgreedTakesItWhenTheLanesOpen() {
        acceptor(8);
        FakeTransport.FakeConnection first = incoming();
        FakeTransport.FakeConnection lane1 = incoming();          // before the peer's probe: one path known
        assertFalse(lane1.readable);
        connection.peerOffered(8, false, false);                 // a 6.1 kernel's probe: 8 paths, first free
        env.scheduler.advanceBy(0);
        assertEquals(PathState.UP, connection.path(1).state());
        assertSame(lane1, new TransportOf(connection.path(1)).transport());
        assertTrue(lane1.readable);
        assertSame(first, path0().transport());
        assertEquals(0, lane1.abortCalls + first.abortCalls);
    }

    @Test
    void whatArrivesAsThePeerEndsAWaitingConnectionIsDeliveredOnceAPathFrees() {
        acceptor(1);
        FakeTransport.FakeConnection first = incoming();
        FakeTransport.FakeConnection second = incoming();
        // The transport reads a socket to its end when the peer resets it, reading stopped or not.
        ConnectionHandler aside = second.handler;
        aside.onBytes(message(1));
        aside.onBytes(message(2));
        closedByPeer(second);
        long dropped = env.counters.get(Counter.RECV_DROP_NO_SOCK);
        closedByPeer(first);
        assertEquals(dropped + 2, env.counters.get(Counter.RECV_DROP_NO_SOCK), "both messages decoded on path 0");
        assertEquals(PathState.DOWN, connection.path(0).state(), "and the connection's close followed them");
        assertEquals(0, second.abortCalls);
    }

    @Test
    void aWaitingConnectionThePeerEndsWithNothingOnItIsForgotten() {
        acceptor(1);
        FakeTransport.FakeConnection first = incoming();
        FakeTransport.FakeConnection second = incoming();
        closedByPeer(second);
        FakeTransport.FakeConnection third = incoming();
        closedByPeer(first);
        assertSame(third, path0().transport(), "the one still waiting takes the path");
    }

    @Test
    void onlyAsManyWaitAsThereCanBePathsTheNextIsRefused() {
        acceptor(1);
        incoming();
        for (int i = 0; i < PathPlacement.ASIDE_MAX; i++) {
            assertNotNull(incoming().handler);
        }
        FakeTransport.FakeConnection more = incoming();
        assertNull(more.handler, "refused: the transport resets it");
        assertEquals(1, env.counters.get(Counter.CONN_ACCEPT_REFUSED));
    }

    @Test
    void shutdownResetsTheWaitingConnections() {
        acceptor(1);
        incoming();
        FakeTransport.FakeConnection second = incoming();
        connection.shutdown();
        assertEquals(1, second.abortCalls, second.toString());
    }
}
