package org.rds4j.core.path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetAddress;
import java.util.List;
import java.util.concurrent.TimeUnit;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.rds4j.core.cong.CongestionMap;

/**
 * The order in which the smaller address connects its extra paths. A peer without SPORT_IDX (Linux 6.1, 6.12) puts
 * every connection it accepts on its first free path, so the paths must connect one at a time in index order, also
 * when several reconnect at once; a peer with SPORT_IDX places them by source port, so they connect together.
 * Virtual time over {@link FakeTransport}: each connect attempt is completed by the test.
 */
class LaneOrderTest {
    private static final long SECOND = TimeUnit.SECONDS.toNanos(1);

    private final FakeEnvironment env = new FakeEnvironment(7);
    private final FakeTransport transport = new FakeTransport(env.scheduler);
    private final Connection connection = connection();

    private Connection connection() {
        env.paths = 8;
        try {
            return new Connection(InetAddress.getByName("10.0.0.1"), InetAddress.getByName("10.0.0.2"), "fake",
                    transport, env, new CongestionMap());
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    @Example
    void towardsAFirstFreePeerThePathsConnectOneAtATimeInIndexOrder() {
        openLanes(false);
        for (int i = 1; i < 8; i++) {
            FakeTransport.Attempt a = onlyPending();
            assertEquals(i, a.pathIndex, "path " + i + " connects next, alone");
            connects(a);
        }
        assertEquals(List.of(), transport.pendingAttempts());
    }

    @Example
    void towardsAPeerWithSportIdxTheyConnectTogether() {
        openLanes(true);
        assertEquals(List.of(1, 2, 3, 4, 5, 6, 7),
                transport.pendingAttempts().stream().map(a -> a.pathIndex).sorted().toList());
    }

    /** Any set of paths above 0 lost at once reconnects lowest index first, each only once the one below is up. */
    @Property(tries = 50)
    void pathsLostTogetherComeBackInIndexOrder(@ForAll @IntRange(min = 1, max = 127) int lostMask) {
        new LaneOrderTest().loseAndReconnect(lostMask);      // jqwik shares one instance between tries
    }

    private void loseAndReconnect(int lostMask) {
        openLanes(false);
        FakeTransport.FakeConnection[] conns = new FakeTransport.FakeConnection[8];
        for (int i = 1; i < 8; i++) {
            FakeTransport.Attempt a = onlyPending();
            conns[a.pathIndex] = connects(a);
        }
        for (int i = 1; i < 8; i++) {
            if ((lostMask & (1 << (i - 1))) != 0) {
                conns[i].handler.onClosed(new IOException("connection reset by peer (test)"));
            }
        }
        for (int i = 1; i < 8; i++) {
            if ((lostMask & (1 << (i - 1))) != 0) {
                env.scheduler.advanceBy(2 * SECOND);        // past any backoff: only the lowest lost path tries
                FakeTransport.Attempt a = onlyPending();
                assertEquals(i, a.pathIndex, "lost " + Integer.toBinaryString(lostMask) + ": path " + i + " next");
                connects(a);
            }
        }
        env.scheduler.advanceBy(2 * SECOND);
        assertEquals(List.of(), transport.pendingAttempts());
        for (int i = 0; i < 8; i++) {
            assertEquals(PathState.UP, connection.path(i).state(), "path " + i);
        }
    }

    /**
     * A path below goes down while a path above is connecting: the peer may put the new connection in the lower
     * path's place, so it is dropped unused, and connects again once the paths below are up.
     */
    @Example
    void aConnectionThatCompletesAfterAPathBelowWentDownIsDropped() {
        openLanes(false);
        FakeTransport.FakeConnection one = connects(onlyPending());
        connects(onlyPending());
        FakeTransport.Attempt three = onlyPending();
        assertEquals(3, three.pathIndex);
        one.handler.onClosed(new IOException("connection reset by peer (test)"));
        FakeTransport.FakeConnection early = transport.connected(three);
        assertEquals(1, early.closeCalls, "path 3's connection, made while path 1 was down, is closed unused");
        assertEquals(0, early.transmitRequests);
        assertEquals(PathState.DOWN, connection.path(3).state());
        env.scheduler.advanceBy(2 * SECOND);
        FakeTransport.Attempt again = onlyPending();
        assertEquals(1, again.pathIndex, "path 1 first");
        connects(again);
        env.scheduler.advanceBy(2 * SECOND);
        FakeTransport.Attempt next = onlyPending();
        assertEquals(3, next.pathIndex, "then path 3");
        connects(next);
    }

    /** Path 0 up, then the peer's pong with NPATHS=8, with or without SPORT_IDX. */
    private void openLanes(boolean sportIdx) {
        connection.path(0).connectIfDown();
        connects(onlyPending());
        connection.peerOffered(8, sportIdx, true);
        env.scheduler.advanceBy(0);
        assertEquals(8, connection.lanes());
    }

    private FakeTransport.Attempt onlyPending() {
        env.scheduler.advanceBy(0);
        List<FakeTransport.Attempt> pending = transport.pendingAttempts();
        assertEquals(1, pending.size(), "one attempt at a time: " + pending);
        return pending.get(0);
    }

    private FakeTransport.FakeConnection connects(FakeTransport.Attempt a) {
        FakeTransport.FakeConnection c = transport.connected(a);
        assertTrue(connection.path(a.pathIndex).state() == PathState.UP, "path " + a.pathIndex + " up");
        return c;
    }
}
