package org.rds4j.transport.loopback;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.rds4j.RdsConnectionInfo;
import org.rds4j.RdsMessageInfo;
import org.rds4j.RdsSocket;
import org.rds4j.RdsSocketOptions;
import org.rds4j.RdsStack;
import org.rds4j.RdsStackConfig;

/**
 * {@code RdsStackConfig.peerReceiveBytes} never stops an honest peer: 8 sockets of host A send to 8 sockets of host
 * B, each with a 4 MiB {@code SO_RCVBUF}, so congestion control lets B's queues grow to 16 MiB in all, four times
 * B's bound. The bound counts only what arrives beyond a socket's budget (half its {@code SO_RCVBUF}), which for an
 * honest sender is what it sent before our congestion map reached it: measured up to four 64 KiB messages per
 * socket (its budget is two, but acknowledgements free it while the map is on its way), 2 MiB in all, half the
 * bound. So B keeps reading A, and an application that reads its sockets round-robin, waiting on each in turn, gets
 * every message. Had the bound counted every queued byte (or been below what A's sockets send in that time), B
 * would have stopped reading A with some sockets' queues empty, and this reader would have waited for ever.
 */
class LoopbackPeerBoundTest {
    private static final long BOUND = 4L << 20;
    private static final int SOCKETS = 8;
    private static final int SIZE = 64 * 1024;
    private static final int PER_SOCKET = 64;

    @Test
    void anHonestPeerIsNeverStoppedHoweverMuchItsSocketsQueue() throws Exception {
        InetAddress a = InetAddress.getByName("10.99.3.1");
        InetAddress b = InetAddress.getByName("10.99.3.2");
        ExecutorService senders = Executors.newFixedThreadPool(SOCKETS);
        try (RdsStack stackA = stack("bound-a", a, RdsStackConfig.builder());
             RdsStack stackB = stack("bound-b", b, RdsStackConfig.builder().peerReceiveBytes(BOUND))) {
            List<RdsSocket> from = new ArrayList<>();
            List<RdsSocket> to = new ArrayList<>();
            for (int i = 0; i < SOCKETS; i++) {
                RdsSocket s = stackA.openSocket();
                s.bind(new InetSocketAddress(a, 5000 + i));
                s.setOption(RdsSocketOptions.SO_SNDTIMEO, Duration.ofSeconds(30));
                from.add(s);
                RdsSocket r = stackB.openSocket();
                r.setOption(RdsSocketOptions.SO_RCVBUF, 4 << 20);
                r.setOption(RdsSocketOptions.SO_RCVTIMEO, Duration.ofSeconds(30));
                r.bind(new InetSocketAddress(b, 6000 + i));
                to.add(r);
            }
            List<Future<?>> sent = new ArrayList<>();
            for (int i = 0; i < SOCKETS; i++) {
                RdsSocket s = from.get(i);
                InetSocketAddress dst = new InetSocketAddress(b, 6000 + i);
                sent.add(senders.submit(() -> {
                    ByteBuffer m = ByteBuffer.allocate(SIZE);
                    for (int n = 1; n <= PER_SOCKET; n++) {
                        m.clear();
                        m.putInt(0, n).putInt(SIZE - 4, n);
                        s.send(m, dst);
                    }
                    return null;
                }));
            }

            // Wait until B holds more than the bound in all, so that a bound on every byte would have acted.
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (unread(stackB) <= 2 * BOUND) {
                assertTrue(System.nanoTime() - deadline < 0, "B's queues never grew past the bound: " + stackB.info());
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(2));
            }

            ByteBuffer dst = ByteBuffer.allocate(SIZE);
            RdsMessageInfo info = new RdsMessageInfo();
            for (int n = 1; n <= PER_SOCKET; n++) {
                for (int i = 0; i < SOCKETS; i++) {
                    dst.clear();
                    assertEquals(SIZE, to.get(i).receive(dst, info, 0), "socket " + i + " message " + n);
                    assertEquals(n, dst.getInt(0), "socket " + i + ": in order, none lost");
                    assertEquals(n, dst.getInt(SIZE - 4));
                }
            }
            for (Future<?> f : sent) {
                f.get(30, TimeUnit.SECONDS);
            }
            RdsConnectionInfo c = connection(stackB);
            System.out.printf("honest peer: bound %d B, peak beyond the sockets' budgets %d B, stopped %d time(s)%n",
                    BOUND, c.overBudgetPeak(), stackB.counters().get("recv_peer_paused"));
            assertEquals(0, stackB.counters().get("recv_peer_paused"), "an honest peer is never stopped");
            assertTrue(c.overBudgetPeak() < BOUND, c.toString());
            assertEquals(0, c.overBudgetBytes(), c.toString());
            assertFalse(c.readingStopped(), c.toString());
        } finally {
            senders.shutdownNow();
            assertTrue(senders.awaitTermination(10, TimeUnit.SECONDS));
        }
    }

    /**
     * A message one socket of B sends to another socket of B never counts against a peer's bound, even when the
     * receiving socket's pooled arrivals last carried that peer's messages (an arrival keeps the peer's budget when
     * it is recycled, so that the next message from the same peer need not store it again).
     */
    @Test
    void messagesBetweenSocketsOfOneStackNeverCountAgainstAPeer() throws Exception {
        InetAddress a = InetAddress.getByName("10.99.4.1");
        InetAddress b = InetAddress.getByName("10.99.4.2");
        try (RdsStack stackA = stack("local-a", a, RdsStackConfig.builder());
             RdsStack stackB = stack("local-b", b, RdsStackConfig.builder().peerReceiveBytes(BOUND))) {
            RdsSocket fromA = stackA.openSocket();
            fromA.bind(new InetSocketAddress(a, 5000));
            RdsSocket to = stackB.openSocket();
            to.setOption(RdsSocketOptions.SO_RCVBUF, 4096);           // a budget of 2,048 bytes
            to.setOption(RdsSocketOptions.SO_RCVTIMEO, Duration.ofSeconds(30));
            to.bind(new InetSocketAddress(b, 6000));
            RdsSocket local = stackB.openSocket();
            local.bind(new InetSocketAddress(b, 6001));
            InetSocketAddress dst = new InetSocketAddress(b, 6000);
            ByteBuffer got = ByteBuffer.allocate(2000);
            RdsMessageInfo info = new RdsMessageInfo();
            for (int n = 0; n < 4; n++) {                              // the socket's arrivals now carried A's
                fromA.send(ByteBuffer.allocate(100), dst);
            }
            for (int n = 0; n < 4; n++) {
                got.clear();
                assertEquals(100, to.receive(got, info, 0));
                assertEquals(new InetSocketAddress(a, 5000), info.source());
            }
            for (int n = 0; n < 3; n++) {                              // 4,500 bytes against a budget of 2,048
                local.send(ByteBuffer.allocate(1500), dst);
            }
            RdsConnectionInfo c = connection(stackB);
            assertEquals(0, c.overBudgetBytes(), "B's own messages counted against A: " + c);
            for (int n = 0; n < 3; n++) {
                got.clear();
                assertEquals(1500, to.receive(got, info, 0));
                assertEquals(new InetSocketAddress(b, 6001), info.source());
            }
            assertEquals(0, connection(stackB).overBudgetBytes());
        }
    }

    private static RdsStack stack(String name, InetAddress address, RdsStackConfig.Builder b) {
        return RdsStack.create(b.name(name).address(address).defaultTransport(LoopbackTransport.NAME).jmx(false)
                .build());
    }

    /** Bytes queued on the stack's sockets and not read. */
    private static long unread(RdsStack stack) {
        java.util.Map<String, Long> c = stack.counters();
        return c.get("recv_bytes_added_to_sock") - c.get("recv_bytes_freed_fromsock");
    }

    private static RdsConnectionInfo connection(RdsStack stack) {
        return stack.info().connections().stream().findFirst()
                .orElseThrow(() -> new AssertionError("no connection: " + stack.info()));
    }
}
