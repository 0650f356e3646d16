package org.rds4j.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.rds4j.RdsMessageInfo;
import org.rds4j.RdsSocket;
import org.rds4j.RdsSocketOptions;
import org.rds4j.RdsStack;
import org.rds4j.RdsStackConfig;
import org.rds4j.core.wire.RdsHeader;

/**
 * Every attack of {@link HostilePeerTest} and {@link PeerAdmissionTest} at once against one stack (docs/security.md),
 * while an honest rds4j host does round trips with it: a peer ignoring congestion maps pushes 1 MiB messages at a
 * socket nobody reads, another floods pings and answers none, a third keeps three messages stalled after their
 * headers, and 100 addresses open and close connections. Every honest round trip completes while the attackers
 * are still being served (the ping flood is still being read during the last batch of round trips), and the
 * victim's heap stays under its bound plus 64 MiB (after a full collection, sampled every half second). The honest
 * latencies are printed next to those before the attack, not judged: the victim's one I/O thread serves the
 * attackers too, and how long the honest peer waits for it depends on how the machine's cores are shared (beside two
 * busy threads, p99 went from 0.1 s to 1.1 s between runs). A stalled honest peer fails on its receive timeout.
 * {@code -Drds4j.hostile.seconds=60} runs the attack for 60 s; the default build runs 8 s.
 */
class HostileMixTest {
    private static final long BOUND = 16L << 20;
    private static final int BIG = 1 << 20;
    private static final int UNREAD_PORT = 4000;
    private static final int ECHO_PORT = 4001;

    @AfterEach
    void noLeaks() {
        LeakRecorder.assertNoLeaks();
    }

    @Test
    void allAttacksAtOnceLeaveHonestTrafficWorkingAndTheHeapBounded() throws Exception {
        int seconds = Integer.getInteger("rds4j.hostile.seconds", 8);
        InetAddress victimAddress = InetAddress.getByName("127.0.230.1");
        InetAddress honestAddress = InetAddress.getByName("127.0.0.1");
        int tcpPort = TcpHosts.freePort();
        AtomicBoolean attacking = new AtomicBoolean(true);
        ExecutorService pool = Executors.newCachedThreadPool();
        MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
        try (RdsStack victim = RdsStack.create(RdsStackConfig.builder().name("mix-victim").address(victimAddress)
                .tcpPort(tcpPort).defaultTransport("tcp").peerReceiveBytes(BOUND)
                .frameTimeout(Duration.ofSeconds(2)).idlePeerTimeout(Duration.ofSeconds(2)).jmx(false).build());
             RdsStack honest = RdsStack.create(RdsStackConfig.builder().name("mix-honest").address(honestAddress)
                     .tcpPort(tcpPort).defaultTransport("tcp").jmx(false).build());
             RdsSocket unread = victim.openSocket();
             RdsSocket echo = victim.openSocket();
             RdsSocket client = honest.openSocket()) {
            unread.bind(new InetSocketAddress(victimAddress, UNREAD_PORT));
            echo.bind(new InetSocketAddress(victimAddress, ECHO_PORT));
            client.bind(new InetSocketAddress(honestAddress, 5000));
            echo.setOption(RdsSocketOptions.SO_RCVTIMEO, Duration.ofSeconds(1));
            client.setOption(RdsSocketOptions.SO_RCVTIMEO, Duration.ofSeconds(30));
            Future<?> echoer = pool.submit(() -> echo(echo, attacking));

            long[] before = roundTrips(client, echo.localAddress(), 2_000);
            System.gc();
            long heapBefore = memory.getHeapMemoryUsage().getUsed();

            List<Future<?>> attacks = new ArrayList<>();
            attacks.add(pool.submit(() -> ignoreCongestion(InetAddress.getByName("127.0.0.2"), victimAddress,
                    tcpPort, attacking)));
            attacks.add(pool.submit(() -> pingFlood(InetAddress.getByName("127.0.0.3"), victimAddress, tcpPort,
                    attacking)));
            attacks.add(pool.submit(() -> stall(victimAddress, tcpPort, attacking)));
            attacks.add(pool.submit(() -> churn(victimAddress, tcpPort, attacking)));

            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
            AtomicLong heapPeak = new AtomicLong();
            Future<?> sampler = pool.submit(() -> {
                while (attacking.get()) {
                    System.gc();
                    heapPeak.accumulateAndGet(memory.getHeapMemoryUsage().getUsed(), Math::max);
                    TimeUnit.MILLISECONDS.sleep(500);       // a sampling period, not a wait for an event
                }
                return null;
            });
            List<long[]> during = new ArrayList<>();
            long pingsAtLastBatch;
            do {
                pingsAtLastBatch = victim.counters().get("recv_ping_unanswered");
                during.add(roundTrips(client, echo.localAddress(), 200));
            } while (System.nanoTime() - end < 0);
            long pingsDuringLastBatch = victim.counters().get("recv_ping_unanswered") - pingsAtLastBatch;
            attacking.set(false);
            for (Future<?> f : attacks) {
                f.get(30, TimeUnit.SECONDS);
            }
            sampler.get(30, TimeUnit.SECONDS);
            echoer.get(30, TimeUnit.SECONDS);
            long[] all = during.stream().flatMapToLong(Arrays::stream).sorted().toArray();
            long p99Before = percentile(before, 0.99);
            long p99During = percentile(all, 0.99);
            long grew = heapPeak.get() - heapBefore;
            java.util.Map<String, Long> c = victim.counters();
            System.out.printf("hostile mix for %d s: %d honest round trips, p50 %d us (before %d), p99 %d us (before"
                            + " %d, x%.1f); heap peak %d MiB above the start (bound %d MiB + 64 MiB);"
                            + " recv_peer_paused %d, recv_ping_unanswered %d (%d during the last 200 round trips),"
                            + " recv_frame_timeout %d%n", seconds,
                    all.length, percentile(all, 0.5) / 1000, percentile(before, 0.5) / 1000, p99During / 1000,
                    p99Before / 1000, (double) p99During / p99Before, grew >> 20, BOUND >> 20,
                    c.get("recv_peer_paused"), c.get("recv_ping_unanswered"), pingsDuringLastBatch,
                    c.get("recv_frame_timeout"));
            assertTrue(grew <= BOUND + (64L << 20), "heap grew " + (grew >> 20) + " MiB");
            // The one I/O thread serves the attackers too, so the honest peer waits longer, by as much as the cores
            // are busy elsewhere: not judged. It must be served while the flood is: every round trip was answered
            // (each within the client's receive timeout), and the last ones while the flooder's pings were still read.
            assertTrue(pingsDuringLastBatch > 0, "the ping flood was no longer read during the last honest round trips:"
                    + " the honest peer was served only once the attack had been shut out");
            assertTrue(c.get("recv_peer_paused") >= 1, c.toString());
            assertTrue(c.get("recv_frame_timeout") >= 1, c.toString());
            assertEquals(0, c.get("recv_drop_no_sock"), c.toString());
        } finally {
            attacking.set(false);
            pool.shutdownNow();
            assertTrue(pool.awaitTermination(30, TimeUnit.SECONDS));
        }
    }

    /** Echoes each message back to its sender until the attack is over. */
    private static Void echo(RdsSocket s, AtomicBoolean attacking) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(64);
        RdsMessageInfo info = new RdsMessageInfo();
        while (attacking.get()) {
            b.clear();
            try {
                s.receive(b, info, 0);
            } catch (org.rds4j.EtimedoutException e) {
                continue;                                    // a second without a round trip: look at the flag
            }
            b.flip();
            s.send(b, info.source());
        }
        return null;
    }

    /** {@code n} round trips of 64 bytes; their times in nanoseconds. */
    private static long[] roundTrips(RdsSocket s, InetSocketAddress to, int n) throws IOException {
        long[] t = new long[n];
        ByteBuffer out = ByteBuffer.allocate(64);
        ByteBuffer in = ByteBuffer.allocate(64);
        RdsMessageInfo info = new RdsMessageInfo();
        for (int i = 0; i < n; i++) {
            out.clear().putLong(0, i);
            long start = System.nanoTime();
            s.send(out, to);
            in.clear();
            assertEquals(64, s.receive(in, info, 0));
            assertEquals(i, in.getLong(0), "the honest peer's round trips stay in order");
            t[i] = System.nanoTime() - start;
        }
        Arrays.sort(t);
        return t;
    }

    private static long percentile(long[] sorted, double p) {
        return sorted[Math.min(sorted.length - 1, (int) (p * sorted.length))];
    }

    /** 1 MiB messages to the unread socket, as fast as TCP takes them; writes time out once the victim stops reading. */
    private static Void ignoreCongestion(InetAddress from, InetAddress to, int tcpPort, AtomicBoolean attacking)
            throws IOException {
        try (SocketChannel ch = RawPeer.connect(from, to, tcpPort)) {
            ch.configureBlocking(false);
            RdsHeader h = new RdsHeader();
            ByteBuffer header = ByteBuffer.allocate(RdsHeader.SIZE);
            ByteBuffer payload = ByteBuffer.allocate(BIG);
            for (long seq = 1; attacking.get(); seq++) {
                h.clear().sequence(seq).length(BIG).sourcePort(6000).destinationPort(UNREAD_PORT);
                header.clear();
                h.encode(header);
                header.flip();
                payload.clear();
                while (attacking.get() && (header.hasRemaining() || payload.hasRemaining())) {
                    if (ch.write(new ByteBuffer[] {header, payload}) == 0) {
                        Thread.onSpinWait();
                        java.util.concurrent.locks.LockSupport.parkNanos(1_000_000);   // TCP holds us back
                    }
                }
            }
        }
        return null;
    }

    /** Pings from one connection, never acknowledging anything and never reading the pongs. */
    private static Void pingFlood(InetAddress from, InetAddress to, int tcpPort, AtomicBoolean attacking)
            throws IOException {
        try (SocketChannel ch = RawPeer.connect(from, to, tcpPort)) {
            ch.configureBlocking(false);
            RdsHeader h = new RdsHeader();
            ByteBuffer batch = ByteBuffer.allocate(1000 * RdsHeader.SIZE);
            for (long seq = 1; attacking.get(); ) {
                batch.clear();
                for (int i = 0; i < 1000; i++) {
                    h.clear().sequence(seq++).sourcePort(7000).destinationPort(0);
                    h.encode(batch);
                }
                batch.flip();
                while (attacking.get() && batch.hasRemaining()) {
                    if (ch.write(batch) == 0) {
                        java.util.concurrent.locks.LockSupport.parkNanos(1_000_000);
                    }
                }
            }
        }
        return null;
    }

    /** Three connections, each a header announcing 1 MiB and 100 bytes, then silence; reopened when dropped. */
    private static Void stall(InetAddress to, int tcpPort, AtomicBoolean attacking) throws IOException {
        RdsHeader h = new RdsHeader();
        List<SocketChannel> open = new ArrayList<>();
        try {
            while (attacking.get()) {
                for (int i = open.size(); i < 3; i++) {
                    SocketChannel ch = RawPeer.connect(InetAddress.getByName("127.0.0." + (10 + i)), to, tcpPort);
                    ByteBuffer start = ByteBuffer.allocate(RdsHeader.SIZE + 100);
                    h.clear().sequence(1).length(BIG).sourcePort(8000).destinationPort(UNREAD_PORT);
                    h.encode(start);
                    start.position(start.limit()).flip();
                    RawPeer.writeFully(ch, start);
                    ch.configureBlocking(false);
                    open.add(ch);
                }
                ByteBuffer probe = ByteBuffer.allocate(64 * 1024);
                for (int i = open.size() - 1; i >= 0; i--) {
                    try {
                        if (open.get(i).read(probe.clear()) < 0) {
                            open.remove(i).close();          // dropped by the victim: stall again
                        }
                    } catch (IOException e) {
                        open.remove(i).close();
                    }
                }
                java.util.concurrent.locks.LockSupport.parkNanos(50_000_000);
            }
        } finally {
            for (SocketChannel ch : open) {
                ch.close();
            }
        }
        return null;
    }

    /** Connections from 100 addresses, opened and closed in turn, every other one with a ping. */
    private static Void churn(InetAddress to, int tcpPort, AtomicBoolean attacking) {
        RdsHeader h = new RdsHeader();
        ByteBuffer ping = ByteBuffer.allocate(RdsHeader.SIZE);
        for (int i = 0; attacking.get(); i++) {
            try (SocketChannel ch = RawPeer.connect(InetAddress.getByName("127.0.1." + (1 + i % 100)), to, tcpPort)) {
                if (i % 2 == 0) {
                    ping.clear();
                    h.clear().sequence(1).sourcePort(9000).destinationPort(0);
                    h.encode(ping);
                    ping.flip();
                    RawPeer.writeFully(ch, ping);
                }
            } catch (IOException e) {
                // refused or reset: what a flood meets
            }
        }
        return null;
    }
}
