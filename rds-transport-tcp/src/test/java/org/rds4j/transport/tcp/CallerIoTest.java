package org.rds4j.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.rds4j.RdsDatagram;
import org.rds4j.RdsMessageInfo;
import org.rds4j.RdsSocket;
import org.rds4j.RdsSocketOptions;
import org.rds4j.RdsStack;
import org.rds4j.RdsStackConfig;

/**
 * Busy-poll over TCP: application threads read and write the sockets themselves (caller I/O, docs/threading.md).
 * What they do must be what the I/O thread would have done: every message once, in order, intact, whichever thread
 * read or wrote it, across hand-overs of reading between callers and the I/O thread, short writes and a peer that
 * goes away. The counters {@code caller_reads} and {@code caller_passes} show that the callers did the work.
 */
@Timeout(120)
class CallerIoTest {
    private final List<AutoCloseable> opened = new ArrayList<>();

    @AfterEach
    void close() throws Exception {
        for (int i = opened.size() - 1; i >= 0; i--) {
            opened.get(i).close();
        }
        LeakRecorder.assertNoLeaks();
    }

    private <T extends AutoCloseable> T keep(T c) {
        opened.add(c);
        return c;
    }

    /** {@code tcp.native}: on epoll where it loads (its descriptors, used inside each connection's gate). */
    String nativeTransport() {
        return "true";
    }

    private RdsStack stack(String name, String address, int port) throws Exception {
        return keep(RdsStack.create(RdsStackConfig.builder().name(name).address(InetAddress.getByName(address))
                .tcpPort(port).defaultTransport("tcp").busyPoll(true).property("tcp.native", nativeTransport())
                .build()));
    }

    private RdsSocket socket(RdsStack stack, String address) throws Exception {
        RdsSocket s = keep(stack.openSocket());
        s.bind(new InetSocketAddress(InetAddress.getByName(address), 0));
        return s;
    }

    /** Two stacks, 127.0.0.1 and 127.0.0.2 on one free TCP port, with a socket on each. */
    private record Pair(RdsStack stackA, RdsStack stackB, RdsSocket a, RdsSocket b) {
    }

    private Pair pair(String name) throws Exception {
        int port = TcpHosts.freePort();
        RdsStack sa = stack(name + "-a", "127.0.0.1", port);
        RdsStack sb = stack(name + "-b", "127.0.0.2", port);
        return new Pair(sa, sb, socket(sa, "127.0.0.1"), socket(sb, "127.0.0.2"));
    }

    static long counter(RdsStack s, String name) {
        Map<String, Long> c = s.counters();
        return c.getOrDefault(name, 0L);
    }

    /** Echoes {@code n} messages back to their sources, each after its receive: replies, written by this thread. */
    static CompletableFuture<Void> echo(RdsSocket s, int n, int size) {
        return CompletableFuture.runAsync(() -> {
            ByteBuffer buf = ByteBuffer.allocateDirect(size);
            RdsMessageInfo info = new RdsMessageInfo();
            try {
                for (int i = 0; i < n; i++) {
                    buf.clear();
                    s.receive(buf, info, 0);
                    buf.flip();
                    s.send(buf, info.source());
                }
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        });
    }

    @Test
    void roundTripsAreReadAndWrittenByTheApplicationThreads() throws Exception {
        Pair p = pair("caller");
        RdsSocket a = p.a();
        RdsSocket b = p.b();
        int n = 3000;
        CompletableFuture<Void> echo = echo(b, n, 64);
        ByteBuffer out = ByteBuffer.allocateDirect(64);
        ByteBuffer in = ByteBuffer.allocateDirect(64);
        RdsMessageInfo info = new RdsMessageInfo();
        for (int i = 0; i < n; i++) {
            out.clear();
            out.putInt(0, i).putInt(60, ~i);
            a.send(out, b.localAddress());
            in.clear();
            assertEquals(64, a.receive(in, info, 0));
            assertEquals(i, in.getInt(0), "the echo of message " + i);
            assertEquals(~i, in.getInt(60), "the end of message " + i);
        }
        echo.get(60, TimeUnit.SECONDS);
        // Most round trips after the first few: each side's reader reads, and each reply is the sender's own pass.
        for (RdsStack s : List.of(p.stackA(), p.stackB())) {
            assertTrue(counter(s, "caller_reads") > n / 2, s + " read in the application thread: "
                    + counter(s, "caller_reads") + " of " + n);
            assertTrue(counter(s, "caller_passes") > n / 2, s + " wrote in the application thread: "
                    + counter(s, "caller_passes") + " of " + n);
        }
    }

    /**
     * A one-way stream: its sender writes it in batches in its own thread, and the reader reads its lane, so neither
     * I/O thread carries it (docs/threading.md). Every message arrives once, in order, through budget waits (the
     * default send buffer holds about 1,600 of them) in which the waiting sender reads the acknowledgements itself.
     */
    @Test
    void aStreamIsWrittenByItsSender() throws Exception {
        Pair p = pair("stream");
        RdsSocket a = p.a();
        RdsSocket b = p.b();
        int n = 20_000;
        CompletableFuture<Void> reader = CompletableFuture.runAsync(() -> {
            ByteBuffer in = ByteBuffer.allocateDirect(64);
            RdsMessageInfo info = new RdsMessageInfo();
            try {
                for (int i = 0; i < n; i++) {
                    in.clear();
                    assertEquals(64, b.receive(in, info, 0));
                    assertEquals(i, in.getInt(0), "message " + i);
                    assertEquals(~i, in.getInt(60), "the end of message " + i);
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
        long passesBefore = counter(p.stackA(), "caller_passes");
        ByteBuffer out = ByteBuffer.allocateDirect(64);
        for (int i = 0; i < n; i++) {
            out.clear();
            out.putInt(0, i).putInt(60, ~i);
            a.send(out, b.localAddress());
        }
        reader.get(60, TimeUnit.SECONDS);
        long passes = counter(p.stackA(), "caller_passes") - passesBefore;
        assertTrue(passes >= 20, "the sender wrote its stream in passes of its own: " + passes + " for " + n
                + " messages");
    }

    /**
     * What a stream's sender leaves queued when it stops, and neither sends nor polls again, the I/O thread writes
     * within its backstop: the last messages do not wait for the sender's next call.
     */
    @Test
    void aStreamsLastMessagesLeaveWithoutTheirSender() throws Exception {
        Pair p = pair("tail");
        RdsSocket a = p.a();
        RdsSocket b = p.b();
        b.setOption(RdsSocketOptions.SO_RCVTIMEO, Duration.ofSeconds(10));
        ByteBuffer buf = ByteBuffer.allocateDirect(64);
        RdsMessageInfo info = new RdsMessageInfo();
        // A round trip first: the path is up, and the first send after a's receive is a reply, written at once.
        a.send(buf.clear(), b.localAddress());
        b.receive(buf.clear(), info, 0);
        b.send(buf.clear(), a.localAddress());
        a.receive(buf.clear(), info, 0);
        int n = 3;
        for (int i = 0; i < n; i++) {
            buf.clear().putInt(0, i);
            a.send(buf, b.localAddress());
        }
        // From here on nothing calls a or its stack: b's receives are on b's stack alone.
        for (int i = 0; i < n; i++) {
            buf.clear();
            assertEquals(64, b.receive(buf, info, 0), "message " + i);
            assertEquals(i, buf.getInt(0), "message " + i);
        }
    }

    /**
     * A stream of requests, each answered, with a send buffer too small for the replies in flight: the requester
     * keeps {@code depth} requests out, so replies are written while the socket is full, short writes hand their rest
     * to the I/O thread, and messages of every size meet in one stream. Everything comes back once, in order.
     */
    @Test
    void shortWritesAndStreamsKeepTheOrder() throws Exception {
        Pair p = pair("caller");
        RdsSocket a = p.a();
        RdsSocket b = p.b();
        int max = 48 * 1024;
        a.setOption(RdsSocketOptions.SO_SNDBUF, 4 * max);
        b.setOption(RdsSocketOptions.SO_SNDBUF, 4 * max);
        int n = 4000;
        int depth = 8;
        CompletableFuture<Void> echo = echo(b, n, max);
        ByteBuffer out = ByteBuffer.allocateDirect(max);
        ByteBuffer in = ByteBuffer.allocateDirect(max);
        RdsMessageInfo info = new RdsMessageInfo();
        int sent = 0;
        for (int got = 0; got < n; got++) {
            while (sent < n && sent - got < depth) {
                int len = sizeOf(sent, max);
                out.clear().limit(len);
                fill(out, sent, len);
                a.send(out, b.localAddress());
                sent++;
            }
            in.clear();
            int len = a.receive(in, info, 0);
            assertEquals(sizeOf(got, max), len, "the length of message " + got);
            check(in, got, len);
        }
        echo.get(60, TimeUnit.SECONDS);
        assertTrue(counter(p.stackB(), "caller_passes") > 0, "the echoing side wrote replies itself");
    }

    /** Sizes from 1 byte to {@code max}, mostly small. */
    private static int sizeOf(int i, int max) {
        int k = i % 16;
        return k < 10 ? 1 + i % 200 : k < 14 ? 1 + (i * 37) % 9000 : max - i % 1000;
    }

    private static void fill(ByteBuffer b, int seq, int len) {
        for (int i = 0; i < len; i++) {
            b.put(i, (byte) (seq * 31 + i));
        }
    }

    private static void check(ByteBuffer b, int seq, int len) {
        for (int i = 0; i < len; i++) {
            if (b.get(i) != (byte) (seq * 31 + i)) {
                throw new AssertionError("message " + seq + " differs at byte " + i + " of " + len);
            }
        }
    }

    /**
     * One busy-polling reader that two peers take turns writing to: reading its path goes to the reader, back to the
     * I/O thread when the reader's messages come from the other peer, and over again. No message waits for it.
     */
    @Test
    void aReaderServedByTwoPeersGetsBothStreams() throws Exception {
        int port = TcpHosts.freePort();
        RdsStack sa = stack("caller-a", "127.0.0.1", port);
        RdsStack sb = stack("caller-b", "127.0.0.2", port);
        RdsStack sc = stack("caller-c", "127.0.0.3", port);
        RdsSocket a = socket(sa, "127.0.0.1");
        RdsSocket b = socket(sb, "127.0.0.2");
        RdsSocket c = socket(sc, "127.0.0.3");
        int n = 2000;
        CompletableFuture<Void> echoB = echo(b, n / 2, 64);
        CompletableFuture<Void> echoC = echo(c, n / 2, 64);
        ByteBuffer out = ByteBuffer.allocateDirect(64);
        ByteBuffer in = ByteBuffer.allocateDirect(64);
        RdsMessageInfo info = new RdsMessageInfo();
        for (int i = 0; i < n; i++) {
            RdsSocket to = i % 2 == 0 ? b : c;
            out.clear();
            out.putInt(0, i);
            a.send(out, to.localAddress());
            in.clear();
            assertEquals(64, a.receive(in, info, 0));
            assertEquals(i, in.getInt(0), "the echo of message " + i);
            assertEquals(to.localAddress(), info.source(), "message " + i + "'s echo came from its peer");
        }
        echoB.get(60, TimeUnit.SECONDS);
        echoC.get(60, TimeUnit.SECONDS);
    }

    /**
     * The peer's stack closes while the reader polls its path: the reader's end of the stream goes back to the I/O
     * thread, which reports the close; a new peer at the same address is then served as before. The last message
     * of a round may reach the next peer too (sent again after the reset, as without busy-poll): its echo is skipped.
     * A request written to the old peer and not acknowledged when the new peer's probe came is discarded, as the
     * kernel does (docs/reliability.md), and reported with RDS_RECVERR: the requester sends it again, as an
     * application must. Nothing may be lost without a word: a request neither echoed nor reported hangs the test.
     */
    @Test
    void aPeerThatGoesAwayAndComesBackIsServedAgain() throws Exception {
        int port = TcpHosts.freePort();
        RdsStack sa = stack("caller-a", "127.0.0.1", port);
        RdsSocket a = socket(sa, "127.0.0.1");
        a.setOption(RdsSocketOptions.RDS_RECVERR, true);
        ByteBuffer out = ByteBuffer.allocateDirect(64);
        ByteBuffer in = ByteBuffer.allocateDirect(64);
        RdsMessageInfo info = new RdsMessageInfo();
        int n = 500;
        for (int round = 0; round < 3; round++) {
            RdsStack sb = RdsStack.create(RdsStackConfig.builder().name("caller-b" + round)
                    .address(InetAddress.getByName("127.0.0.2")).tcpPort(port).defaultTransport("tcp")
                    .busyPoll(true).build());
            try (sb; RdsSocket b = sb.openSocket()) {
                b.bind(new InetSocketAddress(InetAddress.getByName("127.0.0.2"), 7000));
                CompletableFuture<Void> echo = echoUntil(b, -1 - round);
                for (int i = 0; i < n; i++) {
                    int seq = round * n + i;
                    out.clear();
                    out.putInt(0, seq);
                    a.send(out, b.localAddress());
                    int got;
                    do {
                        in.clear();
                        int len = a.receive(in, info, 0);
                        if (info.kind() == RdsDatagram.Kind.SEND_FAILED) {
                            assertEquals(RdsDatagram.Failure.PEER_RESTARTED, info.failure(), "round " + round
                                    + ", message " + i + ": a send failed: " + info.failure());
                            out.clear();
                            out.putInt(0, seq);
                            a.send(out, b.localAddress());       // the discarded message may be this one: again
                            got = Integer.MIN_VALUE;
                            continue;
                        }
                        assertEquals(64, len);
                        got = in.getInt(0);
                    } while (got < seq);            // an earlier one's, sent again to this peer
                    assertEquals(seq, got, "round " + round + ", message " + i);
                }
                out.clear();
                out.putInt(0, -1 - round);
                a.send(out, b.localAddress());       // ends this round's echo
                echo.get(60, TimeUnit.SECONDS);
            }
        }
        assertTrue(counter(sa, "caller_reads") > 0, "the requester read in its own thread");
    }

    /** Echoes every message back to its source until one carries {@code last} first; other rounds' ends it skips. */
    private static CompletableFuture<Void> echoUntil(RdsSocket s, int last) {
        return CompletableFuture.runAsync(() -> {
            ByteBuffer buf = ByteBuffer.allocateDirect(64);
            RdsMessageInfo info = new RdsMessageInfo();
            try {
                while (true) {
                    buf.clear();
                    s.receive(buf, info, 0);
                    int seq = buf.getInt(0);
                    if (seq == last) {
                        return;
                    }
                    if (seq < 0) {
                        continue;                   // an earlier round's end, sent again to this peer
                    }
                    buf.flip();
                    s.send(buf, info.source());
                }
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        });
    }
}
