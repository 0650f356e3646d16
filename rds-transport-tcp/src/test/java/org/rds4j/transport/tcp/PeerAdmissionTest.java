package org.rds4j.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.rds4j.EaccesException;
import org.rds4j.RdsMessageInfo;
import org.rds4j.RdsSocket;
import org.rds4j.RdsSocketOptions;
import org.rds4j.RdsStack;
import org.rds4j.RdsStackConfig;
import org.rds4j.RdsStackInfo;
import org.rds4j.core.wire.RdsHeader;

/**
 * Admission (docs/security.md, "Threat model"), over real TCP from many loopback addresses: a flood of connections from peers that
 * never become useful leaves no state behind once they close, whichever side of the address order they are on;
 * an allow-list refuses the others before anything is kept for them; a peer that exchanged messages stays.
 */
class PeerAdmissionTest {
    private static final Duration IDLE = Duration.ofSeconds(2);

    @AfterEach
    void noLeaks() {
        LeakRecorder.assertNoLeaks();
    }

    /**
     * A flood of connections from many addresses, nine in ten below the victim's (it accepts them) and one in ten
     * above (it connects back to each, and nothing listens there), several connections each, every other one
     * sending a ping first. An honest peer exchanges a message meanwhile. Once the flood has closed, the victim
     * forgets every flooder within the idle timeout and a sweep, and keeps the honest peer. The default build
     * floods 1,000 connections from 200 addresses; {@code -Drds4j.flood.addresses=1000
     * -Drds4j.flood.connections=10} gives 10,000 from 1,000, as docs/security.md reports. The time until nothing is left includes
     * the victim accepting what the kernel queued for it (its listen backlog is 1024).
     */
    @Test
    void aConnectionFloodLeavesNoStateBehind() throws Exception {
        int addresses = Integer.getInteger("rds4j.flood.addresses", 200);
        int perAddress = Integer.getInteger("rds4j.flood.connections", 5);
        InetAddress victimAddress = InetAddress.getByName("127.0.200.1");
        InetAddress honestAddress = InetAddress.getByName("127.0.0.1");
        int tcpPort = TcpHosts.freePort();
        List<InetAddress> flooders = new ArrayList<>();
        for (int i = 0; i < addresses - addresses / 10; i++) {
            flooders.add(InetAddress.getByName("127.0." + (1 + i / 250) + "." + (1 + i % 250)));
        }
        for (int i = 0; i < addresses / 10; i++) {
            flooders.add(InetAddress.getByName("127.0.201." + (1 + i)));
        }
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try (RdsStack victim = stack("victim", victimAddress, tcpPort, RdsStackConfig.builder());
             RdsStack honest = stack("honest", honestAddress, tcpPort, RdsStackConfig.builder());
             RdsSocket v = victim.openSocket();
             RdsSocket h = honest.openSocket()) {
            v.bind(new InetSocketAddress(victimAddress, 4000));
            h.bind(new InetSocketAddress(honestAddress, 4000));
            h.send(ByteBuffer.wrap(new byte[] {1, 2, 3}), v.localAddress());
            v.setOption(RdsSocketOptions.SO_RCVTIMEO, Duration.ofSeconds(10));
            assertEquals(3, v.receive(ByteBuffer.allocate(8), new RdsMessageInfo(), 0));

            long started = System.nanoTime();
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                int first = t;
                done.add(pool.submit(() -> {
                    for (int i = first; i < flooders.size(); i += 4) {
                        for (int k = 0; k < perAddress; k++) {
                            flood(flooders.get(i), new InetSocketAddress(victimAddress, tcpPort), k % 2 == 0);
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> f : done) {
                f.get(600, TimeUnit.SECONDS);
            }
            long closed = System.nanoTime();
            double floodSeconds = (closed - started) / 1e9;
            int peak = victim.info().connections().size();
            await(() -> victim.info().connections().size() == 1, Duration.ofSeconds(30), () -> "only the honest"
                    + " peer is left: " + victim.info().connections().size() + " connections");
            double seconds = (System.nanoTime() - closed) / 1e9;
            RdsStackInfo info = victim.info();
            assertEquals(honestAddress, info.connections().get(0).peer());
            assertTrue(info.congestionMaps().stream().allMatch(m -> m.local() || m.address().equals(honestAddress)),
                    "no flooder's congestion map is kept: " + info.congestionMaps());
            System.out.printf("connection flood: %d connections from %d addresses in %.1f s, %d peers known when it"
                    + " ended, none %.1f s later (idle timeout %d s)%n", addresses * perAddress, addresses,
                    floodSeconds, peak, seconds, IDLE.toSeconds());

            // The honest peer still works both ways.
            v.send(ByteBuffer.wrap(new byte[] {4}), h.localAddress());
            h.setOption(RdsSocketOptions.SO_RCVTIMEO, Duration.ofSeconds(10));
            assertEquals(1, h.receive(ByteBuffer.allocate(8), new RdsMessageInfo(), 0));
        } finally {
            pool.shutdownNow();
            assertTrue(pool.awaitTermination(10, TimeUnit.SECONDS));
        }
    }

    /** An allow-list refuses everyone else, counted, before any state; sends outside it fail with EACCES. */
    @Test
    void theAllowListRefusesOtherPeersBeforeKeepingAnything() throws Exception {
        InetAddress victimAddress = InetAddress.getByName("127.0.210.1");
        InetAddress allowed = InetAddress.getByName("127.0.0.1");
        int tcpPort = TcpHosts.freePort();
        try (RdsStack victim = stack("allow-victim", victimAddress, tcpPort,
                     RdsStackConfig.builder().allowPeers("127.0.0.0/24", "fd00::/8"));
             RdsStack friend = stack("friend", allowed, tcpPort, RdsStackConfig.builder());
             RdsSocket v = victim.openSocket();
             RdsSocket f = friend.openSocket()) {
            v.bind(new InetSocketAddress(victimAddress, 4000));
            f.bind(new InetSocketAddress(allowed, 4000));
            for (int i = 1; i <= 20; i++) {
                flood(InetAddress.getByName("127.0.5." + i), new InetSocketAddress(victimAddress, tcpPort), true);
            }
            await(() -> victim.counters().get("conn_peer_refused") == 20, Duration.ofSeconds(10),
                    () -> "20 refusals: " + victim.counters().get("conn_peer_refused"));
            assertTrue(victim.info().connections().isEmpty(), "nothing kept: " + victim.info().connections());
            EaccesException e = assertThrows(EaccesException.class,
                    () -> v.send(ByteBuffer.allocate(1), new InetSocketAddress("127.0.5.1", 4000)));
            assertTrue(e.getMessage().contains("allowedPeers"), e.getMessage());

            f.send(ByteBuffer.wrap(new byte[] {7}), v.localAddress());
            v.setOption(RdsSocketOptions.SO_RCVTIMEO, Duration.ofSeconds(10));
            assertEquals(1, v.receive(ByteBuffer.allocate(8), new RdsMessageInfo(), 0));
        }
    }

    /** Beyond maxPeers a new peer is refused; peers already known are not. */
    @Test
    void maxPeersRefusesNewPeersOnly() throws Exception {
        InetAddress victimAddress = InetAddress.getByName("127.0.220.1");
        int tcpPort = TcpHosts.freePort();
        try (RdsStack victim = stack("max-victim", victimAddress, tcpPort, RdsStackConfig.builder().maxPeers(3));
             RdsSocket v = victim.openSocket()) {
            v.bind(new InetSocketAddress(victimAddress, 4000));
            List<SocketChannel> open = new ArrayList<>();
            try {
                for (int i = 1; i <= 3; i++) {
                    open.add(RawPeer.connect(InetAddress.getByName("127.0.6." + i), victimAddress, tcpPort));
                }
                await(() -> victim.info().connections().size() == 3, Duration.ofSeconds(10),
                        () -> "3 peers: " + victim.info().connections());
                flood(InetAddress.getByName("127.0.6.4"), new InetSocketAddress(victimAddress, tcpPort), false);
                await(() -> victim.counters().get("conn_peer_refused") == 1, Duration.ofSeconds(10),
                        () -> "the fourth peer refused: " + victim.counters().get("conn_peer_refused"));
                assertEquals(3, victim.info().connections().size());
            } finally {
                for (SocketChannel c : open) {
                    c.close();
                }
            }
        }
    }

    private static RdsStack stack(String name, InetAddress address, int tcpPort, RdsStackConfig.Builder b) {
        return RdsStack.create(b.name(name).address(address).tcpPort(tcpPort).defaultTransport("tcp").jmx(false)
                .idlePeerTimeout(IDLE).reconnectDelays(Duration.ofMillis(1), Duration.ofMillis(100)).build());
    }

    /** One connection from {@code from}: optionally a ping, then an orderly close. */
    private static void flood(InetAddress from, InetSocketAddress to, boolean ping) throws IOException {
        try (SocketChannel ch = RawPeer.connect(from, to.getAddress(), to.getPort())) {
            if (ping) {
                ByteBuffer b = ByteBuffer.allocate(RdsHeader.SIZE);
                new RdsHeader().sequence(1).sourcePort(5000).destinationPort(0).encode(b);
                RawPeer.writeFully(ch, b.flip());
            }
        } catch (IOException e) {
            // The victim may reset a connection it refuses, or one from a larger address that it answers by
            // connecting back: either is what a flood meets.
        }
    }

    private static void await(BooleanSupplier condition, Duration timeout, java.util.function.Supplier<String> what) {
        RawPeer.await(condition, timeout, what);
    }
}
