package org.rds4j.core.testkit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.rds4j.EaddrinuseException;
import org.rds4j.EagainException;
import org.rds4j.EbadfException;
import org.rds4j.EintrException;
import org.rds4j.EinvalException;
import org.rds4j.EmsgsizeException;
import org.rds4j.EnoprotooptException;
import org.rds4j.EnotconnException;
import org.rds4j.EopnotsuppException;
import org.rds4j.EtimedoutException;
import org.rds4j.RdsDatagram;
import org.rds4j.RdsMessageInfo;
import org.rds4j.RdsSocket;
import org.rds4j.RdsSocketOptions;

/**
 * The socket semantics every transport must give, as the kernel's RDS gives them: run by each transport's tests
 * with two stacks, host A and host B, on addresses the subclass chooses.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
public abstract class SocketSemanticsContract extends TwoHostsContract {
    protected static final int MIB = 1 << 20;

    /**
     * A reader whose receives keep timing out while large messages arrive (each may be half decoded into the buffer
     * it lent while waiting when the wait ends) loses, repeats and reorders nothing, and every message is intact and
     * leaves the buffer's position alone when no message came. Seeded: a failure names the seed.
     */
    @Test
    void largeMessagesArriveWholeAndInOrderWhileTheReaderKeepsTimingOut() throws Exception {
        long seed = Seeds.seed();
        RdsSocket a = socket(hostA, addressA(), 4000);
        RdsSocket b = socket(hostB, addressB(), 4001);
        a.setOption(RdsSocketOptions.SO_SNDBUF, 4 * MIB);
        b.setOption(RdsSocketOptions.SO_RCVBUF, 8 * MIB);
        int count = 120;
        int[] sizes = new SplittableRandom(seed).ints(count, 64 * 1024, 512 * 1024).toArray();
        CompletableFuture<Void> sent = CompletableFuture.runAsync(() -> {
            try {
                for (int i = 0; i < count; i++) {
                    a.send(ByteBuffer.wrap(pattern(sizes[i], seed + i)), b.localAddress());
                }
            } catch (IOException e) {
                throw new RuntimeException(e);
            }
        });
        SplittableRandom timeouts = new SplittableRandom(seed + 1);
        ByteBuffer dst = ByteBuffer.allocateDirect(MIB);
        RdsMessageInfo info = new RdsMessageInfo();
        int timedOut = 0;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        for (int i = 0; i < count; ) {
            assertTrue(System.nanoTime() < deadline, "message " + i + " never came (seed " + seed + ")");
            b.setOption(RdsSocketOptions.SO_RCVTIMEO, Duration.ofNanos(timeouts.nextLong(10_000, 500_000)));
            dst.clear();
            int n;
            try {
                n = b.receive(dst, info, 0);
            } catch (EtimedoutException e) {
                timedOut++;
                assertEquals(0, dst.position(), "a receive that timed out moved the position (seed " + seed + ")");
                continue;
            }
            assertEquals(sizes[i], n, "message " + i + "'s length (seed " + seed + ")");
            byte[] got = new byte[n];
            dst.get(0, got);
            assertArrayEquals(pattern(sizes[i], seed + i), got, "message " + i + "'s bytes (seed " + seed + ")");
            i++;
        }
        sent.get(10, TimeUnit.SECONDS);
        System.out.printf("%d large messages intact and in order through %d timed-out receives%n", count, timedOut);
    }

    /**
     * Two threads send on one socket to one port, small messages (which may travel in runs) mixed with larger ones
     * and zero-length ones, as fast as the budget lets them: each thread's messages arrive complete, intact and in
     * the order it sent them. A small message must never join a run queued before a message the same thread sent
     * the ordinary way. Seeded: a failure names the seed.
     */
    @Test
    void mixedSizesFromTwoThreadsOnOneSocketArriveInEachThreadsOrder() throws Exception {
        long seed = Seeds.seed();
        RdsSocket a = socket(hostA, addressA(), 4000);
        RdsSocket b = socket(hostB, addressB(), 4001);
        b.setOption(RdsSocketOptions.SO_RCVTIMEO, Duration.ofSeconds(30));   // a lost message fails, not hangs
        int threads = 2;
        int perThread = 15_000;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<?>> sends = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int thread = t;
                sends.add(pool.submit(() -> {
                    SplittableRandom sizes = new SplittableRandom(seed + thread);
                    ByteBuffer buf = ByteBuffer.allocate(3000);
                    for (int k = 0; k < perThread; k++) {
                        int pick = sizes.nextInt(10);
                        int size = pick < 6 ? 12 + sizes.nextInt(100) : pick < 9 ? 1000 + sizes.nextInt(2000) : 12;
                        buf.clear();
                        buf.putInt(thread).putLong(k);
                        for (int i = 12; i < size; i++) {
                            buf.put((byte) (k + i));
                        }
                        buf.flip();
                        a.send(buf, b.localAddress());
                    }
                    return null;
                }));
            }
            long[] next = new long[threads];
            RdsMessageInfo info = new RdsMessageInfo();
            ByteBuffer dst = ByteBuffer.allocate(4096);
            for (int n = 0; n < threads * perThread; n++) {
                dst.clear();
                int len = b.receive(dst, info, 0);
                int thread = dst.getInt(0);
                long k = dst.getLong(4);
                assertEquals(next[thread], k, "thread " + thread + "'s messages out of order (seed " + seed + ")");
                for (int i = 12; i < len; i++) {
                    assertEquals((byte) (k + i), dst.get(i), "message " + k + "'s byte " + i + " (seed " + seed + ")");
                }
                next[thread]++;
            }
            for (Future<?> f : sends) {
                f.get(60, TimeUnit.SECONDS);
            }
            b.setOption(RdsSocketOptions.SO_RCVTIMEO, Duration.ofMillis(100));
            assertThrows(EtimedoutException.class, () -> b.receive(ByteBuffer.allocate(16), info, 0), "no extra");
        } finally {
            pool.shutdownNow();
        }
    }

    private static byte[] pattern(int size, long seed) {
        byte[] b = new byte[size];
        new SplittableRandom(seed).nextBytes(b);
        return b;
    }

    /**
     * Reads zero-copy completion notifications from {@code a} (within its SO_RCVTIMEO each) until they hold {@code n}
     * cookies in all, each one a completion and nothing else; returns each notification's cookies.
     */
    private List<List<Integer>> zeroCopyCompletions(RdsSocket a, int n) throws IOException {
        List<List<Integer>> notifications = new ArrayList<>();
        RdsMessageInfo info = new RdsMessageInfo();
        ByteBuffer dst = ByteBuffer.allocate(16);
        for (int got = 0; got < n; ) {
            dst.clear();
            try {
                assertEquals(0, a.receive(dst, info, 0));
            } catch (EtimedoutException e) {
                throw new AssertionError("cookies so far " + notifications + "; host A's counters "
                        + hostA.counters(), e);
            }
            assertEquals(RdsDatagram.Kind.ZEROCOPY_COMPLETION, info.kind());
            List<Integer> cookies = new ArrayList<>();
            for (int i = 0; i < info.zeroCopyCookieCount(); i++) {
                cookies.add(info.zeroCopyCookie(i));
            }
            notifications.add(cookies);
            got += cookies.size();
        }
        return notifications;
    }

    @ParameterizedTest(name = "{0} bytes")
    @ValueSource(ints = {0, 1, 100, 4096, 65536, MIB})
    void everySizeArrivesIntact(int size) throws Exception {
        RdsSocket a = socket(hostA, addressA(), 4000);
        RdsSocket b = socket(hostB, addressB(), 4000);
        if (size > 106_496) {
            for (RdsSocket s : List.of(a, b)) {        // the kernel's rule: payload at most half the send buffer
                s.setOption(RdsSocketOptions.SO_SNDBUF, size);
                s.setOption(RdsSocketOptions.SO_RCVBUF, size);
            }
        }
        byte[] sent = pattern(size, size);
        assertEquals(size, a.send(ByteBuffer.wrap(sent), b.localAddress()));
        RdsDatagram d = b.receive(Duration.ofSeconds(30)).orElseThrow();
        assertEquals(a.localAddress(), d.source());
        assertEquals(4000, d.destinationPort());
        assertArrayEquals(sent, bytes(d));
        // and back, which exercises the reverse direction of the same connection
        b.send(ByteBuffer.wrap(sent), a.localAddress());
        assertArrayEquals(sent, bytes(a.receive(Duration.ofSeconds(30)).orElseThrow()));
    }

    @Test
    void moreThanOneMebibyteFailsWithEmsgsizeAndSendsNothing() throws Exception {
        RdsSocket a = socket(hostA, addressA(), 4000);
        RdsSocket b = socket(hostB, addressB(), 4000);
        a.setOption(RdsSocketOptions.SO_SNDBUF, 8 * MIB);
        ByteBuffer tooBig = ByteBuffer.allocate(MIB + 1);
        EmsgsizeException e = assertThrows(EmsgsizeException.class, () -> a.send(tooBig, b.localAddress()));
        assertTrue(e.getMessage().contains("1048576"), e.getMessage());
        assertEquals(0, tooBig.position(), "the buffer was not consumed");
        a.send(ByteBuffer.wrap(new byte[] {42}), b.localAddress());
        RdsDatagram first = b.receive(Duration.ofSeconds(10)).orElseThrow();
        assertEquals(1, first.length(), "the refused message never left");
    }

    @Test
    void aPayloadAboveHalfTheSendBufferFailsWithEmsgsize() throws Exception {
        RdsSocket a = socket(hostA, addressA(), 4000);
        assertEquals(212_992, a.getOption(RdsSocketOptions.SO_SNDBUF));
        InetSocketAddress to = new InetSocketAddress(addressB(), 4000);
        assertThrows(EmsgsizeException.class, () -> a.send(ByteBuffer.allocate(106_497), to));
        a.setOption(RdsSocketOptions.SO_SNDBUF, 106_497);
        assertEquals(2 * 106_497, a.getOption(RdsSocketOptions.SO_SNDBUF), "Linux doubles the value");
    }

    @Test
    void hundredThousandMessagesFromFourSocketsToFourArriveCompleteAndInOrder() throws Exception {
        int senders = 4;
        int receivers = 4;
        int perSender = 25_000;
        List<RdsSocket> out = new ArrayList<>();
        List<RdsSocket> in = new ArrayList<>();
        for (int i = 0; i < senders; i++) {
            out.add(socket(hostA, addressA(), 5000 + i));
            in.add(socket(hostB, addressB(), 6000 + i));
        }
        ExecutorService pool = Executors.newFixedThreadPool(senders + receivers);
        try {
            List<Future<?>> sends = new ArrayList<>();
            for (int i = 0; i < senders; i++) {
                RdsSocket s = out.get(i);
                sends.add(pool.submit(() -> {
                    ByteBuffer buf = ByteBuffer.allocate(64);
                    long[] next = new long[receivers];
                    for (int k = 0; k < perSender; k++) {
                        int r = k % receivers;
                        buf.clear();
                        buf.putLong(next[r]++).putInt(s.localAddress().getPort()).flip();
                        s.send(buf, in.get(r).localAddress());
                    }
                    return null;
                }));
            }
            List<Future<Integer>> receives = new ArrayList<>();
            for (int r = 0; r < receivers; r++) {
                RdsSocket s = in.get(r);
                int expected = senders * perSender / receivers;
                receives.add(pool.submit(() -> {
                    Map<InetSocketAddress, Long> next = new HashMap<>();
                    for (int n = 0; n < expected; n++) {
                        RdsDatagram d = s.receive(Duration.ofSeconds(60)).orElseThrow(
                                () -> new AssertionError("timed out waiting for a message"));
                        long seq = d.payload().getLong(0);
                        long want = next.getOrDefault(d.source(), 0L);
                        assertEquals(want, seq, "message from " + d.source() + " out of order");
                        assertEquals(d.source().getPort(), d.payload().getInt(8));
                        next.put(d.source(), seq + 1);
                    }
                    assertTrue(s.receive(Duration.ofMillis(100)).isEmpty(), "no extra message");
                    return expected;
                }));
            }
            // One bound for all the workers, inside the class's timeout: a stuck one is reported, not interrupted.
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(100);
            for (int i = 0; i < senders; i++) {
                StuckWork.await(sends.get(i), secondsLeft(deadline), "sender " + i, hostA, hostB);
            }
            int total = 0;
            for (int r = 0; r < receivers; r++) {
                total += StuckWork.await(receives.get(r), secondsLeft(deadline), "receiver " + r, hostA, hostB);
            }
            assertEquals(senders * perSender, total);
        } finally {
            pool.shutdownNow();
        }
    }

    private static long secondsLeft(long deadline) {
        return Math.max(1, TimeUnit.NANOSECONDS.toSeconds(deadline - System.nanoTime()));
    }

    @Test
    void receiveWithTimeoutReturnsEmpty() throws Exception {
        RdsSocket b = socket(hostB, addressB(), 4000);
        long start = System.nanoTime();
        Optional<RdsDatagram> d = b.receive(Duration.ofMillis(200));
        assertTrue(d.isEmpty());
        assertTrue(System.nanoTime() - start >= TimeUnit.MILLISECONDS.toNanos(190), "waited for the timeout");
    }

    /** protocol.md "Socket calls": SO_RCVTIMEO bounds a blocking recvmsg, which then fails with ETIMEDOUT, not EAGAIN. */
    @Test
    void aBlockingReceivePastSoRcvtimeoFailsWithEtimedout() throws Exception {
        RdsSocket b = socket(hostB, addressB(), 4000);
        b.setOption(RdsSocketOptions.SO_RCVTIMEO, Duration.ofMillis(100));
        assertEquals(Duration.ofMillis(100), b.getOption(RdsSocketOptions.SO_RCVTIMEO));
        assertThrows(EtimedoutException.class, b::receive);
        assertThrows(EtimedoutException.class, () -> b.receive(ByteBuffer.allocate(8), new RdsMessageInfo(), 0));
    }

    /** The kernel's EINTR: an interrupted blocking receive fails with EintrException and keeps the interrupt. */
    @Test
    void anInterruptedBlockingReceiveFailsWithEintr() throws Exception {
        RdsSocket b = socket(hostB, addressB(), 4000);
        CompletableFuture<Boolean> stillInterrupted = new CompletableFuture<>();
        Thread t = new Thread(() -> {
            try {
                b.receive();
                stillInterrupted.completeExceptionally(new AssertionError("receive returned"));
            } catch (EintrException e) {
                stillInterrupted.complete(Thread.currentThread().isInterrupted());
            } catch (Throwable e) {
                stillInterrupted.completeExceptionally(e);
            }
        }, "receiver");
        t.start();
        t.interrupt();                   // whether or not it is already blocked, the interrupt must end the wait
        assertTrue(stillInterrupted.get(10, TimeUnit.SECONDS), "the interrupt flag is kept");
        t.join(10_000);
    }

    @Test
    void nonBlockingReceiveWithNothingQueuedFailsWithEagain() throws Exception {
        RdsSocket b = socket(hostB, addressB(), 4000);
        b.configureBlocking(false);
        assertThrows(EagainException.class, b::receive);
    }

    @Test
    void sendBeforeBindFailsWithEnotconn() throws Exception {
        try (RdsSocket s = hostA.openSocket()) {
            EnotconnException e = assertThrows(EnotconnException.class,
                    () -> s.send(ByteBuffer.allocate(1), new InetSocketAddress(addressB(), 4000)));
            assertTrue(e.getMessage().contains("bind"), e.getMessage());
        }
    }

    @Test
    void bindingATakenAddressAndPortFailsWithEaddrinuse() throws Exception {
        socket(hostA, addressA(), 4000);
        try (RdsSocket second = hostA.openSocket()) {
            assertThrows(EaddrinuseException.class, () -> second.bind(new InetSocketAddress(addressA(), 4000)));
            second.bind(new InetSocketAddress(addressA(), 4001));     // the socket is still usable
        }
    }

    @Test
    void bindRulesFollowTheKernel() throws Exception {
        try (RdsSocket s = hostA.openSocket()) {
            assertThrows(EinvalException.class, () -> s.bind(new InetSocketAddress("0.0.0.0", 4000)));
            assertThrows(EinvalException.class, () -> s.bind(new InetSocketAddress(addressA(), 1)));
            s.bind(new InetSocketAddress(addressA(), 0));
            int port = s.localAddress().getPort();
            assertTrue(port >= 2, "an ephemeral port is never 0 or 1: " + port);
            assertThrows(EinvalException.class, () -> s.bind(new InetSocketAddress(addressA(), 4002)));
        }
    }

    @Test
    void transportIsChosenOnceBeforeBind() throws Exception {
        try (RdsSocket s = hostA.openSocket()) {
            assertNull(s.getOption(RdsSocketOptions.SO_RDS_TRANSPORT));
            assertThrows(EnoprotooptException.class, () -> s.setOption(RdsSocketOptions.SO_RDS_TRANSPORT, "ib"));
            s.setOption(RdsSocketOptions.SO_RDS_TRANSPORT, transport());
            assertThrows(EopnotsuppException.class,
                    () -> s.setOption(RdsSocketOptions.SO_RDS_TRANSPORT, transport()));
            s.bind(new InetSocketAddress(addressA(), 0));
            assertEquals(transport(), s.getOption(RdsSocketOptions.SO_RDS_TRANSPORT));
        }
    }

    @Test
    @Timeout(30)
    void closeWakesABlockedReceive() throws Exception {
        RdsSocket b = socket(hostB, addressB(), 4000);
        CompletableFuture<Throwable> outcome = CompletableFuture.supplyAsync(() -> {
            try {
                b.receive();
                return null;
            } catch (Throwable t) {
                return t;
            }
        });
        // Not a sleep-to-wait: the close must wake the call whether or not it is already blocked.
        b.close();
        Throwable t = outcome.get(10, TimeUnit.SECONDS);
        assertInstanceOf(EbadfException.class, t);
        assertFalse(b.isOpen());
        assertThrows(EbadfException.class, () -> b.send(ByteBuffer.allocate(1), b.localAddress()));
    }

    @Test
    void aFullSendBufferMakesNonBlockingSendsFailAndBlockingSendsTimeOut() throws Exception {
        // Nobody listens at this address, so messages stay queued while the path keeps trying to connect.
        RdsSocket a = socket(hostA, addressA(), 4000);
        InetSocketAddress nowhere = new InetSocketAddress(unreachablePeer(), 4000);
        a.configureBlocking(false);
        ByteBuffer chunk = ByteBuffer.allocate(50_000);
        a.send(chunk.clear(), nowhere);
        a.send(chunk.clear(), nowhere);
        a.send(chunk.clear(), nowhere);             // 100000 < 106496 still accepted: the last may overshoot
        assertThrows(EagainException.class, () -> a.send(chunk.clear(), nowhere));
        a.configureBlocking(true);
        a.setOption(RdsSocketOptions.SO_SNDTIMEO, Duration.ofMillis(200));
        assertThrows(EtimedoutException.class, () -> a.send(chunk.clear(), nowhere));
        assertTrue(hostA.counters().get("send_queue_full") >= 2);
    }

    @Test
    void aSocketCannotSendToTheOtherIpFamily() throws Exception {
        RdsSocket a = socket(hostA, addressA(), 4000);
        assertThrows(EopnotsuppException.class,
                () -> a.send(ByteBuffer.allocate(1), new InetSocketAddress(InetAddress.getByName("::1"), 4000)));
    }

    @Test
    void aPingToPortZeroIsAnsweredByAPongFromPortZero() throws Exception {
        RdsSocket a = socket(hostA, addressA(), 0);
        socket(hostB, addressB(), 4000);          // host B is up (it listens once a socket binds)
        for (int i = 0; i < 3; i++) {
            a.send(ByteBuffer.allocate(0), new InetSocketAddress(addressB(), 0));
            RdsDatagram pong = a.receive(Duration.ofSeconds(10)).orElseThrow();
            assertEquals(new InetSocketAddress(addressB(), 0), pong.source());
            assertEquals(0, pong.length());
        }
        // Our 3 pings, plus the stack's own probe and acknowledgement pings (the kernel counts them all as pings).
        assertTrue(hostB.counters().get("recv_ping") >= 3, hostB.counters().toString());
    }

    @Test
    void messagesToAnUnboundPortAreDroppedAndCounted() throws Exception {
        RdsSocket a = socket(hostA, addressA(), 4000);
        RdsSocket b = socket(hostB, addressB(), 4000);
        a.send(ByteBuffer.allocate(10), new InetSocketAddress(addressB(), 4999));
        a.send(ByteBuffer.allocate(3), b.localAddress());   // in order after the dropped one
        assertEquals(3, b.receive(Duration.ofSeconds(10)).orElseThrow().length());
        assertEquals(1L, hostB.counters().get("recv_drop_no_sock"));
    }

    @Test
    void socketsOfOneHostSendToEachOtherWithoutATransportConnection() throws Exception {
        RdsSocket a1 = socket(hostA, addressA(), 4000);
        RdsSocket a2 = socket(hostA, addressA(), 4001);
        a1.send(ByteBuffer.wrap(new byte[] {1, 2, 3}), a2.localAddress());
        RdsDatagram d = a2.receive(Duration.ofSeconds(5)).orElseThrow();
        assertEquals(a1.localAddress(), d.source());
        a1.send(ByteBuffer.allocate(0), new InetSocketAddress(addressA(), 0));
        assertNotNull(a1.receive(Duration.ofSeconds(5)).orElseThrow());
    }

    @Test
    void awaitSentReturnsOnceEverythingLeft() throws Exception {
        RdsSocket a = socket(hostA, addressA(), 4000);
        RdsSocket b = socket(hostB, addressB(), 4000);
        for (int i = 0; i < 100; i++) {
            a.send(ByteBuffer.allocate(1000), b.localAddress());
        }
        assertTrue(a.awaitSent(Duration.ofSeconds(30)));
        for (int i = 0; i < 100; i++) {
            assertTrue(b.receive(Duration.ofSeconds(30)).isPresent());
        }
    }

    @Test
    void zeroLengthMessagesAreWaitedForByAwaitSent() throws Exception {
        RdsSocket a = socket(hostA, addressA(), 4000);
        RdsSocket b = socket(hostB, addressB(), 4000);
        for (int i = 0; i < 1000; i++) {
            a.send(ByteBuffer.allocate(0), b.localAddress());
        }
        assertTrue(a.awaitSent(Duration.ofSeconds(30)), "awaitSent counts messages, not only bytes");
        for (int i = 0; i < 1000; i++) {
            assertEquals(0, b.receive(Duration.ofSeconds(30)).orElseThrow().length());
        }
    }

    @Test
    void aZeroCopySendWithoutSoZerocopyFailsWithEinvalAndSendsNothing() throws Exception {
        RdsSocket a = socket(hostA, addressA(), 4000);
        RdsSocket b = socket(hostB, addressB(), 4000);
        ByteBuffer payload = ByteBuffer.allocateDirect(100);
        assertThrows(org.rds4j.EinvalException.class, () -> a.sendZeroCopy(payload, b.localAddress(), 7));
        assertEquals(0, payload.position(), "nothing was taken from the buffer");
        assertTrue(b.receive(Duration.ofMillis(200)).isEmpty());
    }

    /**
     * The kernel's MSG_ZEROCOPY: the bytes arrive intact, and every cookie comes back once, in the order the
     * messages were freed, at most eight per notification, ahead of data.
     */
    @Test
    void zeroCopySendsArriveIntactAndReportEveryCookieOnce() throws Exception {
        RdsSocket a = socket(hostA, addressA(), 4000);
        RdsSocket b = socket(hostB, addressB(), 4000);
        a.setOption(RdsSocketOptions.SO_ZEROCOPY, true);
        assertEquals(true, a.getOption(RdsSocketOptions.SO_ZEROCOPY));
        int n = 30;                                  // 60 KB: below the receiver's budget, so no congestion wait
        List<ByteBuffer> lent = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            ByteBuffer buf = ByteBuffer.allocateDirect(2000);
            buf.put(0, pattern(2000, i));
            lent.add(buf);
            assertEquals(2000, a.sendZeroCopy(buf, b.localAddress(), 1000 + i));
            assertEquals(buf.limit(), buf.position(), "the position advances as for send()");
        }
        for (int i = 0; i < n; i++) {
            assertArrayEquals(pattern(2000, i), bytes(b.receive(Duration.ofSeconds(30)).orElseThrow()));
        }
        a.setOption(RdsSocketOptions.SO_RCVTIMEO, Duration.ofSeconds(10));
        List<Integer> cookies = new ArrayList<>();
        for (List<Integer> notification : zeroCopyCompletions(a, n)) {
            assertTrue(notification.size() >= 1 && notification.size() <= 8,
                    notification.size() + " cookies in one notification");
            cookies.addAll(notification);
        }
        List<Integer> expected = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            expected.add(1000 + i);
        }
        assertEquals(expected, cookies, "each cookie once, in the order the messages were freed");
        assertTrue(a.receive(Duration.ofMillis(100)).isEmpty(), "nothing more");
    }

    /**
     * Large zero-copy sends, which the TCP transport writes straight from the caller's memory: the bytes arrive
     * intact, the caller's buffers are untouched, and every cookie comes back once. A read-only buffer (which the
     * transport cannot wrap) and a heap buffer go the copying way and report theirs too.
     */
    @Test
    void largeZeroCopySendsArriveIntactAndReportEveryCookieOnce() throws Exception {
        RdsSocket a = socket(hostA, addressA(), 4000);
        RdsSocket b = socket(hostB, addressB(), 4000);
        a.setOption(RdsSocketOptions.SO_ZEROCOPY, true);
        a.setOption(RdsSocketOptions.SO_RCVTIMEO, Duration.ofSeconds(10));
        int n = 12;
        List<ByteBuffer> lent = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            int len = i % 2 == 0 ? 40_000 + i : 100_000 - i;          // both under the default send budget
            ByteBuffer buf = i % 6 == 5 ? ByteBuffer.allocate(len) : ByteBuffer.allocateDirect(len);
            buf.put(0, pattern(len, i));
            if (i % 6 == 3) {
                buf = buf.asReadOnlyBuffer();
            }
            lent.add(buf);
            assertEquals(len, a.sendZeroCopy(buf, b.localAddress(), 2000 + i));
            // one at a time: the receiver's budget holds about one message this size
            assertArrayEquals(pattern(len, i), bytes(b.receive(Duration.ofSeconds(30)).orElseThrow()), "message " + i);
        }
        List<Integer> cookies = new ArrayList<>();
        zeroCopyCompletions(a, n).forEach(cookies::addAll);
        List<Integer> expected = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            expected.add(2000 + i);
        }
        cookies.sort(null);
        assertEquals(expected, cookies, "each cookie once");
        for (int i = 0; i < n; i++) {
            ByteBuffer buf = lent.get(i);
            byte[] now = new byte[buf.capacity()];
            buf.duplicate().clear().get(now);
            assertArrayEquals(pattern(buf.capacity(), i), now, "the caller's buffer " + i + " was changed");
        }
        assertTrue(a.receive(Duration.ofMillis(100)).isEmpty(), "nothing more");
    }

    @Test
    void cancelledZeroCopyMessagesStillReportTheirCookies() throws Exception {
        RdsSocket a = socket(hostA, addressA(), 4000);
        a.setOption(RdsSocketOptions.SO_ZEROCOPY, true);
        a.configureBlocking(false);
        InetSocketAddress nobody = new InetSocketAddress(unreachablePeer(), 4000);
        for (int i = 0; i < 5; i++) {
            a.sendZeroCopy(ByteBuffer.allocate(10), nobody, i);
        }
        a.cancelSentTo(nobody);
        RdsDatagram d = a.receive(Duration.ofSeconds(10)).orElseThrow();
        assertEquals(RdsDatagram.Kind.ZEROCOPY_COMPLETION, d.kind());
        assertArrayEquals(new int[] {0, 1, 2, 3, 4}, d.zeroCopyCookies(), "the buffers are the caller's again");
    }
}
