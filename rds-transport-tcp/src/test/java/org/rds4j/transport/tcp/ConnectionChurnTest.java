package org.rds4j.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.rds4j.RdsMemoryInfo;
import org.rds4j.RdsMessageInfo;
import org.rds4j.RdsSocket;
import org.rds4j.RdsSocketOptions;
import org.rds4j.RdsStack;
import org.rds4j.RdsStackConfig;
import org.rds4j.core.stack.CoreStack;
import org.rds4j.core.spi.OffHeapMemory;

/**
 * Off-heap memory a hostile peer cannot grow: while an honest host sends messages of mixed sizes (64 bytes to
 * 200 KiB) to a victim stack with a small off-heap bound, a {@link ChurnPeer} opens and closes 20,000 connections from
 * 100 loopback addresses as fast as it can, each with a ping and one to twenty frames to the honest socket's port,
 * half of them with a corrupted frame, and holds 50 more open that never read. Every honest message arrives, in order and intact, and the victim's off-heap
 * bytes in use, sampled from its account every millisecond and by its own high-water mark, never exceed the bound.
 * And when the bound fills, new peers are shed while a kept one goes on.
 */
class ConnectionChurnTest {
    private static final long BOUND = 24L << 20;
    private static final int CONNECTIONS = Integer.getInteger("rds4j.churn.connections", 20_000);
    private static final int PORT = 4100;
    private static final int[] SIZES = {64, 1000, 8 * 1024, 70 * 1024, 200 * 1024, 300};

    @AfterEach
    void noLeaks() {
        LeakRecorder.assertNoLeaks();
    }

    @Test
    @Timeout(120)
    void churningConnectionsNeitherStopHonestTrafficNorGrowOffHeapMemoryPastTheBound() throws Exception {
        long seed = Long.getLong("rds4j.churn.seed", System.nanoTime());
        InetAddress victimAddress = InetAddress.getByName("127.0.240.1");
        InetAddress honestAddress = InetAddress.getByName("127.0.240.2");
        int tcpPort = TcpHosts.freePort();
        ExecutorService pool = Executors.newCachedThreadPool();
        AtomicBoolean sending = new AtomicBoolean(true);
        try (RdsStack victim = RdsStack.create(RdsStackConfig.builder().name("churn-victim").address(victimAddress)
                .tcpPort(tcpPort).defaultTransport("tcp").offHeapBytes(BOUND).idlePeerTimeout(Duration.ofSeconds(1))
                .jmx(false).build());
             RdsStack honest = RdsStack.create(RdsStackConfig.builder().name("churn-honest").address(honestAddress)
                     .tcpPort(tcpPort).defaultTransport("tcp").jmx(false).build());
             RdsSocket rx = victim.openSocket();
             RdsSocket tx = honest.openSocket()) {
            rx.setOption(RdsSocketOptions.SO_RCVBUF, 1 << 20);
            rx.setOption(RdsSocketOptions.SO_RCVTIMEO, Duration.ofSeconds(1));
            rx.bind(new InetSocketAddress(victimAddress, PORT));
            tx.setOption(RdsSocketOptions.SO_SNDBUF, 4 << 20);
            tx.bind(new InetSocketAddress(honestAddress, 0));
            OffHeapMemory account = ((CoreStack) victim).offHeap();

            AtomicLong sent = new AtomicLong();
            AtomicLong peak = new AtomicLong();
            AtomicBoolean sampling = new AtomicBoolean(true);
            Future<?> sampler = pool.submit(() -> {
                while (sampling.get()) {
                    peak.accumulateAndGet(account.inUse(), Math::max);
                    LockSupport.parkNanos(1_000_000);            // a sampling period, not a wait for an event
                }
                return null;
            });
            Future<?> sender = pool.submit(() -> send(tx, new InetSocketAddress(victimAddress, PORT), sending, sent));
            AtomicLong received = new AtomicLong();
            AtomicLong foreign = new AtomicLong();
            AtomicLong total = new AtomicLong(-1);
            Future<?> receiver = pool.submit(() -> receive(rx, honestAddress, total, received, foreign));

            // From addresses below the victim's: it takes their connections (it would connect back to a larger one).
            // And 50 connections that never read: the victim's port turns congested and back again and again (its
            // budget is small), and each change is a congestion map for every connection, these too.
            ChurnPeer churn = new ChurnPeer(victimAddress, tcpPort, PORT, 0, CONNECTIONS, 50, 100, "127.0.239", 4,
                    seed);
            long start = System.nanoTime();
            try (churn) {
                churn.start();
                RawPeer.await(churn::churnDone, Duration.ofSeconds(90), () -> "the churn ended; " + churn.summary());
            }
            long churnNanos = System.nanoTime() - start;
            sending.set(false);
            sender.get(60, TimeUnit.SECONDS);
            total.set(sent.get());
            receiver.get(60, TimeUnit.SECONDS);
            sampling.set(false);
            sampler.get(10, TimeUnit.SECONDS);
            RdsMemoryInfo m = victim.info().memory();
            String figures = String.format("%s; churn took %.1f s; honest: %d sent, %d received; %d foreign messages"
                            + " delivered; off-heap: sampled peak %d KiB, high-water %d KiB, now %d KiB, bound %d KiB,"
                            + " %d refusals; counters %s", churn.summary(), churnNanos / 1e9, sent.get(),
                    received.get(), foreign.get(), peak.get() >> 10, m.highWater() >> 10, m.inUse() >> 10,
                    BOUND >> 10, m.refusals(), victim.counters());
            System.out.println("connection churn: " + figures);
            assertTrue(churn.connected() >= CONNECTIONS * 9L / 10, "most churned connections were taken: " + figures);
            assertEquals(sent.get(), received.get(), "every honest message arrived: " + figures);
            assertTrue(sent.get() > 0, figures);
            assertTrue(peak.get() <= BOUND, "sampled off-heap use within the bound: " + figures);
            assertTrue(m.highWater() <= BOUND, "off-heap high-water mark within the bound: " + figures);
        } finally {
            sending.set(false);
            pool.shutdownNow();
            assertTrue(pool.awaitTermination(30, TimeUnit.SECONDS));
        }
    }

    /**
     * Once the stack's buffers take most of the bound (here: batches written to hosts that stopped reading, which an
     * established connection is never refused), a connection from a new peer is refused, counted and logged, while
     * the peer the victim already keeps goes on exchanging messages.
     */
    @Test
    @Timeout(60)
    void aFullBoundShedsNewPeersAndKeepsTheOnesItHas() throws Exception {
        long bound = 8L << 20;
        InetAddress victimAddress = InetAddress.getByName("127.0.242.100");
        InetAddress honestAddress = InetAddress.getByName("127.0.242.2");
        int tcpPort = TcpHosts.freePort();
        List<ServerSocketChannel> sinks = new ArrayList<>();
        List<SocketChannel> accepted = new ArrayList<>();
        List<RdsSocket> fillers = new ArrayList<>();
        try (RdsStack victim = RdsStack.create(RdsStackConfig.builder().name("shed-victim").address(victimAddress)
                .tcpPort(tcpPort).defaultTransport("tcp").offHeapBytes(bound).jmx(false).build());
             RdsStack honest = RdsStack.create(RdsStackConfig.builder().name("shed-honest").address(honestAddress)
                     .tcpPort(tcpPort).defaultTransport("tcp").jmx(false).build());
             RdsSocket rx = victim.openSocket();
             RdsSocket tx = honest.openSocket()) {
            rx.setOption(RdsSocketOptions.SO_RCVTIMEO, Duration.ofSeconds(30));
            rx.bind(new InetSocketAddress(victimAddress, PORT));
            tx.bind(new InetSocketAddress(honestAddress, 0));
            tx.setOption(RdsSocketOptions.SO_RCVTIMEO, Duration.ofSeconds(30));
            OffHeapMemory account = ((CoreStack) victim).offHeap();
            InetSocketAddress to = new InetSocketAddress(victimAddress, PORT);
            // The honest peer is kept before the bound fills.
            ByteBuffer small = ByteBuffer.allocate(64);
            tx.send(small.clear().putLong(0, 0), to);
            ByteBuffer in = ByteBuffer.allocate(64);
            RdsMessageInfo info = new RdsMessageInfo();
            assertEquals(64, rx.receive(in.clear(), info, 0));

            // Hosts that accept the victim's connections and never read: each holds up to the transport's high water
            // mark (1 MiB) of the victim's written batches, until the shedding point is passed.
            long shedAt = bound / 100 * RdsStackConfig.OFF_HEAP_SHED_PERCENT;
            ByteBuffer chunk = ByteBuffer.allocate(64 * 1024);
            ByteBuffer probe = ByteBuffer.allocate(1);
            for (int i = 0; i < 12 && account.inUse() < shedAt; i++) {
                InetAddress sink = InetAddress.getByName("127.0.242." + (110 + i));
                ServerSocketChannel server = ServerSocketChannel.open();
                sinks.add(server);
                server.setOption(java.net.StandardSocketOptions.SO_RCVBUF, 4096);   // a small window: the bytes stay
                server.bind(new InetSocketAddress(sink, tcpPort));                  // with the victim
                RdsSocket f = victim.openSocket();
                fillers.add(f);
                f.setOption(RdsSocketOptions.SO_SNDBUF, 16 << 20);
                f.bind(new InetSocketAddress(victimAddress, 0));
                for (int k = 0; k < 120; k++) {                 // more than the kernel takes
                    f.send(chunk.clear(), new InetSocketAddress(sink, 7000));
                }
                SocketChannel c = server.accept();
                accepted.add(c);
                c.configureBlocking(false);
                RawPeer.await(() -> {
                    try {
                        return c.read(probe.clear()) != 0;                           // the victim is writing
                    } catch (IOException e) {
                        return true;
                    }
                }, Duration.ofSeconds(10), () -> "the victim writes to " + sink);
            }
            RawPeer.await(() -> account.inUse() >= shedAt, Duration.ofSeconds(10),
                    () -> "the shedding point was reached: " + account.info());
            assertTrue(account.inUse() >= shedAt, "the shedding point was reached: " + account.info());

            long refusedBefore = victim.counters().get("conn_peer_refused");
            long memoryRefusalsBefore = victim.info().memory().refusals();
            try (SocketChannel newcomer = RawPeer.connect(InetAddress.getByName("127.0.242.3"), victimAddress,
                    tcpPort)) {
                ByteBuffer b = ByteBuffer.allocate(16);
                boolean reset;
                try {
                    reset = newcomer.read(b) < 0;
                } catch (IOException e) {
                    reset = true;                                   // the refusal's RST
                }
                assertTrue(reset, "a new peer is refused while the bound is nearly taken: " + account.info());
            }
            assertEquals(refusedBefore + 1, victim.counters().get("conn_peer_refused"));
            assertTrue(victim.info().memory().refusals() > memoryRefusalsBefore, victim.info().memory().toString());
            // The kept peer goes on.
            for (int i = 1; i <= 100; i++) {
                tx.send(small.clear().putLong(0, i), to);
                assertEquals(64, rx.receive(in.clear(), info, 0));
                assertEquals(i, in.getLong(0));
            }
            System.out.println("shedding: " + victim.info().memory() + " with " + sinks.size()
                    + " hosts not reading");
        } finally {
            for (RdsSocket f : fillers) {
                f.close();
            }
            for (SocketChannel c : accepted) {
                c.close();
            }
            for (ServerSocketChannel s : sinks) {
                s.close();
            }
        }
    }

    /** Sends numbered messages of the sizes above in turn until told to stop; counts them. */
    private static Void send(RdsSocket tx, InetSocketAddress to, AtomicBoolean sending, AtomicLong sent)
            throws IOException {
        ByteBuffer b = ByteBuffer.allocate(SIZES[4]);
        for (long i = 0; sending.get(); i++) {
            int size = SIZES[(int) (i % SIZES.length)];
            b.clear().limit(size);
            b.putLong(0, i);
            b.put(size - 1, (byte) i);
            tx.send(b, to);
            sent.incrementAndGet();
        }
        return null;
    }

    /**
     * Receives until every message sent has arrived ({@code total}, once the sender is done); checks the honest ones'
     * order, size and content.
     */
    private static Void receive(RdsSocket rx, InetAddress honest, AtomicLong total, AtomicLong received,
            AtomicLong foreign) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(256 * 1024);
        RdsMessageInfo info = new RdsMessageInfo();
        long next = 0;
        while (total.get() < 0 || next < total.get()) {
            int n;
            try {
                n = rx.receive(b.clear(), info, 0);
            } catch (org.rds4j.EtimedoutException e) {
                continue;                                          // a second without a message: look at the flag
            }
            if (!info.source().getAddress().equals(honest)) {
                foreign.incrementAndGet();                         // a churned connection's frame that was valid
                continue;
            }
            assertEquals(SIZES[(int) (next % SIZES.length)], n, "size of honest message " + next);
            assertEquals(next, b.getLong(0), "honest messages arrive in order");
            assertEquals((byte) next, b.get(n - 1), "the end of honest message " + next);
            next++;
            received.set(next);
        }
        return null;
    }
}
