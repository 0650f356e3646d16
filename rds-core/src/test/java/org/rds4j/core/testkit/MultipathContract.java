package org.rds4j.core.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.rds4j.RdsDatagram;
import org.rds4j.RdsSocket;
import org.rds4j.RdsSocketOptions;
import org.rds4j.RdsStack;
import org.rds4j.core.stack.CoreStack;
import org.rds4j.core.path.Connection;
import org.rds4j.core.path.ConnectionPath;
import org.rds4j.core.path.PathState;
import org.rds4j.core.spi.TransportConnection;
import org.rds4j.core.spi.TransportInstance;

/**
 * Multipath between two rds4j hosts, as every transport must carry it: host A (the smaller address) opens the 8
 * paths once the probe has settled their number, host B places each connection on the path A's source port names
 * (SPORT_IDX), sockets spread over the lanes, and every socket's messages arrive once and in order, also while the
 * lanes open under traffic and when single lanes are reset mid-stream.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
public abstract class MultipathContract extends HostsContract {
    private static final int SOCKETS = 16;
    private static final int SEND_PORT = 7000;
    private static final int RECV_PORT = 8000;

    private final List<RdsStack> stacks = new ArrayList<>();
    private final List<RdsSocket> sockets = new ArrayList<>();
    private ExecutorService pool;
    /** Named in every failure: the seed of the test's random choices, if it makes any. */
    private String seedNote = "";

    @AfterEach
    void closeAll() {
        if (pool != null) {
            pool.shutdownNow();
        }
        sockets.forEach(RdsSocket::close);
        stacks.forEach(RdsStack::close);
    }

    @Test
    void eightPathsOpenFromTheSmallerAddressAndSocketsSpreadOverThem() throws Exception {
        RdsStack a = stack("mp-a", 0);
        RdsStack b = stack("mp-b", 1);
        exchange(a, b, 0, 2_000, null, null);          // the lanes open under traffic: order must hold across
        await(() -> allUp(connection(a)) && allUp(connection(b)), "all 8 paths up at both ends");
        exchange(a, b, 100, 2_000, null, null);        // new sockets, on their lanes from the start

        Connection ca = connection(a);
        Connection cb = connection(b);
        assertEquals(8, ca.lanes(), "A uses the 8 paths both offer");
        assertEquals(8, cb.lanes(), "B uses the 8 paths both offer");
        await(() -> allUp(ca) && allUp(cb), "all 8 paths up at both ends: " + paths(ca) + paths(cb));
        for (int i = 0; i < 8; i++) {
            TransportConnection at = ca.path(i).transportConnection();
            TransportConnection bt = cb.path(i).transportConnection();
            assertNotNull(at, "A path " + i);
            assertNotNull(bt, "B path " + i);
            assertEquals(i, at.localAddress().getPort() % TransportInstance.PATH_PORT_MODULUS,
                    "A connects path " + i + " from a port that names it: " + at);
            assertEquals(at.localAddress().getPort(), bt.remoteAddress().getPort(),
                    "B placed A's path " + i + " connection on its own path " + i + ": " + bt);
        }
        int lanesUsed = 0;
        for (int i = 0; i < 8; i++) {
            if (Long.compareUnsigned(ca.path(i).nextTxSeq(), 500) > 0) {
                lanesUsed++;
            }
        }
        assertTrue(lanesUsed >= 4, "16 sockets spread over at least 4 lanes: " + paths(ca));
    }

    @Test
    void resetsOfSingleLanesLoseNothingAndReorderNothing() throws Exception {
        RdsStack a = stack("mp-a", 0);
        RdsStack b = stack("mp-b", 1);
        long seed = Seeds.seed();
        SplittableRandom random = new SplittableRandom(seed);
        seedNote = " (seed " + seed + ")";
        // The senders wait halfway until three lanes were reset under them: faults come every 25 ms, and a fast
        // machine sent everything before the third.
        CountDownLatch threeResets = new CountDownLatch(3);
        exchange(a, b, 0, 20_000, () -> {
            Connection ca = connection(a);
            if (ca.lanes() == 1) {
                return;                            // single lanes once there are several
            }
            int lane = random.nextInt(ca.lanes());
            TransportConnection tc = ca.path(lane).transportConnection();
            if (tc != null) {
                tc.abort();
                threeResets.countDown();
            }
        }, threeResets);
        Connection ca = connection(a);
        long resets = 0;
        for (int i = 0; i < ca.pathCount(); i++) {
            resets += ca.path(i).resets();
        }
        assertTrue(resets >= 3, "lanes were reset (seed " + seed + "): " + paths(ca));
        assertEquals(8, ca.lanes());
    }

    private RdsStack stack(String name, int index) throws IOException {
        RdsStack s = newStack(name, index == 0 ? addressA() : addressB(), index);
        stacks.add(s);
        return s;
    }

    /**
     * 16 sockets on A each send {@code perSocket} numbered messages to their partner on B, which checks that they
     * arrive complete and in order; {@code fault}, if given, runs every 25 ms while they flow, and the senders wait
     * halfway for {@code halfway}, if given.
     */
    private void exchange(RdsStack a, RdsStack b, int portOffset, int perSocket, Runnable fault,
                          CountDownLatch halfway) throws Exception {
        List<RdsSocket> senders = new ArrayList<>();
        List<RdsSocket> receivers = new ArrayList<>();
        for (int i = 0; i < SOCKETS; i++) {
            RdsSocket r = b.openSocket();
            sockets.add(r);
            r.setOption(RdsSocketOptions.SO_RCVBUF, 4 << 20);
            r.bind(new InetSocketAddress(addressB(), RECV_PORT + portOffset + i));
            receivers.add(r);
            RdsSocket s = a.openSocket();
            sockets.add(s);
            s.bind(new InetSocketAddress(addressA(), SEND_PORT + portOffset + i));
            senders.add(s);
        }
        if (pool != null) {
            pool.shutdownNow();
        }
        pool = Executors.newFixedThreadPool(2 * SOCKETS);
        List<Future<?>> work = new ArrayList<>();
        for (int i = 0; i < SOCKETS; i++) {
            RdsSocket s = senders.get(i);
            RdsSocket r = receivers.get(i);
            InetSocketAddress to = new InetSocketAddress(addressB(), RECV_PORT + portOffset + i);
            InetSocketAddress from = new InetSocketAddress(addressA(), SEND_PORT + portOffset + i);
            work.add(pool.submit(() -> {
                ByteBuffer buf = ByteBuffer.allocate(Long.BYTES);
                for (long k = 0; k < perSocket; k++) {
                    if (halfway != null && k == perSocket / 2 && !halfway.await(60, TimeUnit.SECONDS)) {
                        fail("the faults never came" + seedNote);
                    }
                    buf.clear();
                    buf.putLong(k).flip();
                    s.send(buf, to);
                }
                return null;
            }));
            work.add(pool.submit(() -> {
                for (long k = 0; k < perSocket; k++) {
                    Optional<RdsDatagram> d = r.receive(Duration.ofSeconds(30));
                    if (d.isEmpty()) {
                        fail("socket " + to + ": message " + k + " never arrived" + seedNote);
                    }
                    assertEquals(from, d.get().source());
                    long got = d.get().payload().getLong();
                    if (got != k) {
                        fail("socket " + to + ": expected message " + k + ", got " + got + seedNote);
                    }
                }
                return null;
            }));
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
        for (Future<?> f : work) {
            while (true) {
                try {
                    f.get(25, TimeUnit.MILLISECONDS);
                    break;
                } catch (java.util.concurrent.TimeoutException e) {
                    if (System.nanoTime() > deadline) {
                        fail("the exchange did not finish in 90 s" + seedNote + ": " + paths(connection(a))
                                + paths(connection(b)));
                    }
                    if (fault != null) {
                        fault.run();
                    }
                }
            }
        }
    }

    private static Connection connection(RdsStack s) {
        List<Connection> cs = ((CoreStack) s).connections();
        assertEquals(1, cs.size(), "one connection per host pair: " + cs);
        return cs.get(0);
    }

    private static boolean allUp(Connection c) {
        for (int i = 0; i < c.lanes(); i++) {
            if (c.path(i).state() != PathState.UP) {
                return false;
            }
        }
        return true;
    }

    private static String paths(Connection c) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < c.pathCount(); i++) {
            ConnectionPath p = c.path(i);
            sb.append("\n  ").append(p);
        }
        return sb.toString();
    }

    private static void await(BooleanSupplier condition, String what) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                fail("timed out waiting for " + what);
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));   // state the API has no event for
        }
    }
}
