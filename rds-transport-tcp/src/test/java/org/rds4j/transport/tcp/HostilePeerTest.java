package org.rds4j.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.rds4j.RdsConnectionInfo;
import org.rds4j.RdsMessageInfo;
import org.rds4j.RdsSocket;
import org.rds4j.RdsStack;
import org.rds4j.RdsStackConfig;
import org.rds4j.core.wire.RdsHeader;

/**
 * Hostile peers that speak raw RDS frames over TCP (docs/security.md, "Threat model"). A peer that ignores congestion maps: raw RDS frames over TCP from 127.0.0.1, 256 KiB messages as fast
 * as TCP takes them, to a socket on 127.0.0.2 that nobody reads. Without a bound the victim's heap grows until it
 * dies. With one, the peer's connection stops being read once what it sent beyond the socket's budget passes
 * {@code peerReceiveBytes}, TCP holds the rest back in the peer's own buffers, and once the application reads, every
 * message arrives in order: nothing is dropped.
 */
class HostilePeerTest {
    private static final long BOUND = 4L << 20;
    private static final int SIZE = 256 * 1024;
    /** 48 MiB: far more than the bound plus every TCP buffer between the two ends (a few MiB each on loopback). */
    private static final int MESSAGES = 192;
    /** Reading stops at the end of the read that crossed the bound: one message and a read's worth past it. */
    private static final long SLACK = 2L << 20;
    private static final int RDS_PORT = 4000;

    @AfterEach
    void noLeaks() {
        LeakRecorder.assertNoLeaks();
    }

    @Test
    void aPeerIgnoringCongestionStopsBeingReadAtItsBoundAndLosesNothing() throws Exception {
        InetAddress hostile = InetAddress.getByName("127.0.0.1");
        InetAddress victimAddress = InetAddress.getByName("127.0.0.2");
        int tcpPort = TcpHosts.freePort();
        ExecutorService writer = Executors.newSingleThreadExecutor();
        try (RdsStack victim = RdsStack.create(RawPeer.victim(victimAddress, tcpPort).peerReceiveBytes(BOUND).build());
             RdsSocket unread = victim.openSocket();
             SocketChannel peer = SocketChannel.open()) {
            unread.bind(new InetSocketAddress(victimAddress, RDS_PORT));
            RawPeer.connect(peer, hostile, victimAddress, tcpPort);
            Future<?> written = writer.submit(() -> {
                writeMessages(peer);
                return null;
            });

            await(() -> victim.counters().get("recv_peer_paused") >= 1, "the peer's connection stops being read");
            RdsConnectionInfo c = RawPeer.connectionFromPeer(victim);
            assertTrue(c.readingStopped(), c.toString());
            assertTrue(c.overBudgetBytes() > BOUND, "stopped only past the bound: " + c);
            assertFalse(written.isDone(), "TCP cannot hold 48 MiB between the ends: the writer must be held back");

            // The application reads: reading resumes below half the bound, and every message arrives in order.
            ByteBuffer dst = ByteBuffer.allocate(SIZE);
            RdsMessageInfo info = new RdsMessageInfo();
            unread.setOption(org.rds4j.RdsSocketOptions.SO_RCVTIMEO, java.time.Duration.ofSeconds(30));
            for (int i = 1; i <= MESSAGES; i++) {
                dst.clear();
                int n = unread.receive(dst, info, 0);
                assertEquals(SIZE, n, "message " + i);
                assertEquals(i, dst.getInt(0), "messages arrive in order, none lost");
                assertEquals(i, dst.getInt(SIZE - 4));
            }
            written.get(30, TimeUnit.SECONDS);

            RdsConnectionInfo after = RawPeer.connectionFromPeer(victim);
            System.out.printf("peer ignoring congestion: bound %d B, peak beyond the socket budget %d B, stopped %d time(s)%n", BOUND,
                    after.overBudgetPeak(), victim.counters().get("recv_peer_paused"));
            assertTrue(after.overBudgetPeak() <= BOUND + SLACK,
                    "the victim held at most the bound and a read past it: " + after);
            assertEquals(0, after.overBudgetBytes(), after.toString());
            assertFalse(after.readingStopped(), after.toString());
        } finally {
            writer.shutdownNow();
            assertTrue(writer.awaitTermination(10, TimeUnit.SECONDS));
        }
    }

    /**
     * A ping flood from a peer that never acknowledges: each pong is kept until the peer has it, so without a bound
     * the victim's queue grows by one message per ping for as long as the flood lasts. The path answers until it
     * holds 256 pongs, counts the rest unanswered, and still delivers the peer's data that follows.
     */
    @Test
    void aPingFloodWithoutAcknowledgementsHoldsAtMost256Pongs() throws Exception {
        InetAddress hostile = InetAddress.getByName("127.0.0.1");
        InetAddress victimAddress = InetAddress.getByName("127.0.0.2");
        int tcpPort = TcpHosts.freePort();
        int pings = 20_000;
        try (RdsStack victim = RdsStack.create(RawPeer.victim(victimAddress, tcpPort).build());
             RdsSocket socket = victim.openSocket();
             SocketChannel peer = SocketChannel.open()) {
            socket.bind(new InetSocketAddress(victimAddress, RDS_PORT));
            RawPeer.connect(peer, hostile, victimAddress, tcpPort);
            RdsHeader h = new RdsHeader();
            ByteBuffer frames = ByteBuffer.allocate((pings + 1) * RdsHeader.SIZE + 8);
            for (int i = 1; i <= pings; i++) {
                h.clear().sequence(i).sourcePort(5000).destinationPort(0);
                h.encode(frames);
            }
            h.clear().sequence(pings + 1).length(8).sourcePort(5000).destinationPort(RDS_PORT);
            h.encode(frames);
            frames.putLong(42);
            frames.flip();
            RawPeer.writeFully(peer, frames);
            // The data message after the flood arrives: every ping before it was handled.
            socket.setOption(org.rds4j.RdsSocketOptions.SO_RCVTIMEO, java.time.Duration.ofSeconds(30));
            ByteBuffer dst = ByteBuffer.allocate(8);
            assertEquals(8, socket.receive(dst, new RdsMessageInfo(), 0));
            assertEquals(42, dst.getLong(0));

            java.util.Map<String, Long> counters = victim.counters();
            RdsConnectionInfo c = RawPeer.connectionFromPeer(victim);
            int held = c.paths().stream().mapToInt(p -> p.queuedMessages() + p.unackedMessages()).sum();
            System.out.printf("ping flood: %d pings, %d pongs sent, %d unanswered, %d messages held%n", pings,
                    counters.get("send_pong"), counters.get("recv_ping_unanswered"), held);
            assertEquals(pings, counters.get("recv_ping"));
            assertTrue(held <= 256 + 8, "the path holds at most 256 pongs (and the few messages of its own): " + c);
            assertTrue(counters.get("recv_ping_unanswered") >= pings - 2 * 256, counters.toString());
        }
    }

    /**
     * Slowloris: a header that announces a 1 MiB message, 100 bytes of it, then nothing. The victim drops the
     * connection once the message has taken longer than its frameTimeout, and a message sent on a new connection
     * afterwards arrives.
     */
    @Test
    void aMessageThatStallsDropsItsConnection() throws Exception {
        InetAddress hostile = InetAddress.getByName("127.0.0.1");
        InetAddress victimAddress = InetAddress.getByName("127.0.0.2");
        int tcpPort = TcpHosts.freePort();
        try (RdsStack victim = RdsStack.create(RawPeer.victim(victimAddress, tcpPort)
                .frameTimeout(java.time.Duration.ofSeconds(1)).build());
             RdsSocket socket = victim.openSocket();
             SocketChannel slow = SocketChannel.open()) {
            socket.bind(new InetSocketAddress(victimAddress, RDS_PORT));
            RawPeer.connect(slow, hostile, victimAddress, tcpPort);
            RdsHeader h = new RdsHeader();
            ByteBuffer start = ByteBuffer.allocate(RdsHeader.SIZE + 100);
            h.clear().sequence(1).length(1 << 20).sourcePort(5000).destinationPort(RDS_PORT);
            h.encode(start);
            start.position(start.limit()).flip();
            RawPeer.writeFully(slow, start);
            long began = System.nanoTime();
            await(() -> victim.counters().get("recv_frame_timeout") == 1, "the stalled message times out");
            double seconds = (System.nanoTime() - began) / 1e9;
            // The victim closed its end: the peer reads the end of the stream (or a reset) soon after.
            slow.configureBlocking(true);
            slow.socket().setSoTimeout(10_000);
            ByteBuffer sink = ByteBuffer.allocate(64 * 1024);
            int n;
            try {
                while ((n = slow.socket().getInputStream().read(sink.array())) >= 0) {
                    assertTrue(n >= 0);
                }
            } catch (java.net.SocketException e) {
                // reset: as good as an orderly close here
            }
            System.out.printf("slowloris: a 1 MiB message stalled after 148 bytes; connection dropped %.1f s later"
                    + " (frameTimeout 1 s)%n", seconds);

            try (SocketChannel honest = SocketChannel.open()) {
                RawPeer.connect(honest, hostile, victimAddress, tcpPort);
                ByteBuffer frame = ByteBuffer.allocate(RdsHeader.SIZE + 8);
                h.clear().sequence(1).length(8).sourcePort(5000).destinationPort(RDS_PORT);
                h.encode(frame);
                frame.putLong(7).flip();
                RawPeer.writeFully(honest, frame);
                socket.setOption(org.rds4j.RdsSocketOptions.SO_RCVTIMEO, java.time.Duration.ofSeconds(10));
                ByteBuffer dst = ByteBuffer.allocate(8);
                assertEquals(8, socket.receive(dst, new RdsMessageInfo(), 0));
                assertEquals(7, dst.getLong(0));
            }
        }
    }

    /**
     * Two peers ignoring congestion, each under its own bound (8 MiB) but together over the stack's (6 MiB): both
     * stop being read, the victim holds about the stack's bound, an honest host that sends within budget is still
     * served meanwhile, and once the socket is read every message of both arrives, each peer's in order.
     */
    @Test
    void peersIgnoringCongestionTogetherStopAtTheStacksBound() throws Exception {
        InetAddress victimAddress = InetAddress.getByName("127.0.0.20");
        InetAddress honestAddress = InetAddress.getByName("127.0.0.4");
        int tcpPort = TcpHosts.freePort();
        long stackBound = 6L << 20;
        int messages = 64;                                   // 16 MiB per peer
        ExecutorService writers = Executors.newFixedThreadPool(2);
        try (RdsStack victim = RdsStack.create(RawPeer.victim(victimAddress, tcpPort).peerReceiveBytes(8L << 20)
                .stackReceiveBytes(stackBound).build());
             RdsStack honest = RdsStack.create(RdsStackConfig.builder().name("honest").address(honestAddress)
                     .tcpPort(tcpPort).defaultTransport("tcp").jmx(false).build());
             RdsSocket unread = victim.openSocket();
             RdsSocket served = victim.openSocket();
             RdsSocket h = honest.openSocket();
             SocketChannel p1 = SocketChannel.open();
             SocketChannel p2 = SocketChannel.open()) {
            unread.bind(new InetSocketAddress(victimAddress, RDS_PORT));
            served.bind(new InetSocketAddress(victimAddress, RDS_PORT + 1));
            h.bind(new InetSocketAddress(honestAddress, 5000));
            p1.bind(new InetSocketAddress(InetAddress.getByName("127.0.0.1"), 0));
            p2.bind(new InetSocketAddress(InetAddress.getByName("127.0.0.3"), 0));
            p1.connect(new InetSocketAddress(victimAddress, tcpPort));
            p2.connect(new InetSocketAddress(victimAddress, tcpPort));
            List<Future<?>> written = new ArrayList<>();
            for (SocketChannel p : List.of(p1, p2)) {
                written.add(writers.submit(() -> {
                    writeMessages(p, messages);
                    return null;
                }));
            }
            await(() -> victim.counters().get("recv_peer_paused") >= 2, "both peers stop being read");
            java.util.Map<String, Long> c = victim.counters();
            long queued = c.get("recv_bytes_added_to_sock") - c.get("recv_bytes_freed_fromsock");
            System.out.printf("two peers ignoring congestion: stack bound %d B, %d B queued when both stopped%n",
                    stackBound, queued);
            assertTrue(queued <= stackBound + (2L << 20), "about the stack's bound is held: " + queued);

            // An honest host within its budget is served all the while.
            h.send(ByteBuffer.wrap(new byte[] {9}), served.localAddress());
            served.setOption(org.rds4j.RdsSocketOptions.SO_RCVTIMEO, java.time.Duration.ofSeconds(10));
            assertEquals(1, served.receive(ByteBuffer.allocate(8), new RdsMessageInfo(), 0));

            ByteBuffer dst = ByteBuffer.allocate(SIZE);
            RdsMessageInfo info = new RdsMessageInfo();
            unread.setOption(org.rds4j.RdsSocketOptions.SO_RCVTIMEO, java.time.Duration.ofSeconds(30));
            java.util.Map<InetAddress, Integer> next = new java.util.HashMap<>();
            for (int i = 0; i < 2 * messages; i++) {
                dst.clear();
                assertEquals(SIZE, unread.receive(dst, info, 0));
                int expected = next.merge(info.source().getAddress(), 1, Integer::sum);
                assertEquals(expected, dst.getInt(0), "each peer's messages in order, none lost");
            }
            for (Future<?> f : written) {
                f.get(30, TimeUnit.SECONDS);
            }
            assertEquals(2, next.size());
        } finally {
            writers.shutdownNow();
            assertTrue(writers.awaitTermination(10, TimeUnit.SECONDS));
        }
    }

    /** Data messages 1 to {@link #MESSAGES}, each {@link #SIZE} bytes stamped with its number at both ends. */
    private static void writeMessages(SocketChannel ch) throws IOException {
        writeMessages(ch, MESSAGES);
    }

    /** Data messages 1 to {@code count}, each {@link #SIZE} bytes stamped with its number at both ends. */
    private static void writeMessages(SocketChannel ch, int count) throws IOException {
        RdsHeader h = new RdsHeader();
        ByteBuffer header = ByteBuffer.allocate(RdsHeader.SIZE);
        ByteBuffer payload = ByteBuffer.allocate(SIZE);
        for (int i = 1; i <= count; i++) {
            h.clear().sequence(i).length(SIZE).sourcePort(5000).destinationPort(RDS_PORT);
            header.clear();
            h.encode(header);
            header.flip();
            payload.clear();
            payload.putInt(0, i).putInt(SIZE - 4, i);
            RawPeer.writeFully(ch, header, payload);
        }
    }

    private static void await(BooleanSupplier condition, String what) {
        RawPeer.await(condition, java.time.Duration.ofSeconds(30), () -> what);
    }
}
