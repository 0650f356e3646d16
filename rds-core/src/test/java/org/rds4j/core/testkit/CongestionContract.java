package org.rds4j.core.testkit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.rds4j.EagainException;
import org.rds4j.EbadfException;
import org.rds4j.EinvalException;
import org.rds4j.EmsgsizeException;
import org.rds4j.EnobufsException;
import org.rds4j.EnotconnException;
import org.rds4j.EtimedoutException;
import org.rds4j.RdsDatagram;
import org.rds4j.RdsMessageInfo;
import org.rds4j.RdsSelector;
import org.rds4j.RdsSocket;
import org.rds4j.RdsSocketOptions;
import org.rds4j.RdsStack;
import org.rds4j.core.stack.CoreStack;
import org.rds4j.core.path.Connection;

/**
 * Congestion control and the kernel's socket semantics around it (budgets, errno, recvmsg flags, poll, cancel), as
 * every transport must give them: run by each transport's tests with two stacks, host A and host B, on addresses
 * the subclass chooses (two stacks = two hosts). Protocol facts cite docs/protocol.md.
 *
 * <p>Waiting is always on an event with a timeout: blocking calls with timeouts, latches, or {@link #waitUntil} (a
 * bounded poll of a condition for which the API has no event, such as a counter or a congestion bit).
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
public abstract class CongestionContract extends TwoHostsContract {
    protected static final int MIB = 1 << 20;
    /** The receive budget most tests use: SO_RCVBUF set to 16384 gives a buffer of 32768 and a budget of 16384. */
    protected static final int RCV_BUDGET = 16_384;
    /** The default send budget: half of the default SO_SNDBUF 212992 (docs/protocol.md, "Sizes and budgets"). */
    protected static final int DEFAULT_SND_BUDGET = 106_496;

    // ------------------------------------------------------------------------------------------------ helpers

    /** Waits for a condition the API offers no event for (a counter, a map bit), polling every millisecond. */
    protected static void waitUntil(BooleanSupplier condition, Duration timeout, String what) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                fail("timed out after " + timeout + " waiting until " + what);
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
        }
    }

    protected static long counter(RdsStack stack, String name) {
        Long v = stack.counters().get(name);
        assertTrue(v != null, "no counter " + name + " in " + stack.counters().keySet());
        return v;
    }

    /** Unread payload bytes on the sockets of {@code stack} (what protocol.md "Congestion maps" counts). */
    protected static long unreadBytes(RdsStack stack) {
        return counter(stack, "recv_bytes_added_to_sock") - counter(stack, "recv_bytes_freed_fromsock");
    }

    protected static int sendQueued(RdsSocket s) throws IOException {
        return s.getOption(RdsSocketOptions.RDS_SEND_QUEUED);
    }

    /** Whether the port of {@code receiver} is marked in its host's local congestion map (protocol.md "Congestion maps"). */
    protected static boolean locallyCongested(RdsStack host, InetSocketAddress receiver) {
        return ((CoreStack) host).localMap(receiver.getAddress()).isCongested(receiver.getPort());
    }

    /** Whether host {@code sender} sees {@code receiver}'s port congested in its copy of the peer's map. */
    protected static boolean peerSeesCongested(RdsStack sender, InetSocketAddress receiver) {
        for (Connection c : ((CoreStack) sender).connections()) {
            if (c.peer().equals(receiver.getAddress()) && c.peerMap().isCongested(receiver.getPort())) {
                return true;
            }
        }
        return false;
    }

    private static ByteBuffer message(int size, long seq, int tag) {
        ByteBuffer b = ByteBuffer.allocate(size);
        b.putLong(0, seq);
        b.putInt(8, tag);
        return b;
    }

    /**
     * Sends numbered {@code size}-byte messages from a non-blocking {@code sender} until a send fails with ENOBUFS
     * (protocol.md "Congestion maps"): the receiver's port is congested and the sender's host knows it. A full send buffer (EAGAIN) is waited
     * out. Returns the number of messages accepted; the sender is left non-blocking.
     */
    protected static int sendUntilEnobufs(RdsSocket sender, InetSocketAddress to, int size, long firstSeq)
            throws IOException {
        sender.configureBlocking(false);
        int sent = 0;
        while (true) {
            assertTrue(sent < 100_000, "the destination never became congested");
            try {
                sender.send(message(size, firstSeq + sent, sender.localAddress().getPort()), to);
                sent++;
            } catch (EnobufsException e) {
                return sent;
            } catch (EagainException e) {
                assertTrue(sender.awaitSent(Duration.ofSeconds(30)), "the send buffer never drained");
            }
        }
    }

    // ------------------------------------------------------------------------------------------------ send buffer

    /**
     * protocol.md "Socket calls", send budget: SO_SNDBUF v makes a buffer of 2v and a budget of v; a send is accepted while the bytes
     * held before it are below the budget (the last overshoots); then EAGAIN (non-blocking) or ETIMEDOUT after
     * SO_SNDTIMEO (blocking); EMSGSIZE for a payload above the budget or 1 MiB, checked before the budget.
     * isWritable() is POLLOUT: held < budget (poll). Cancelling returns the bytes (RDS_CANCEL_SENT_TO).
     */
    @Test
    void theSendBudgetIsSndbufAsSetAndTheLastMessageMayOvershoot() throws Exception {
        RdsSocket a = socket(hostA, addressA(), 4000);
        InetSocketAddress nowhere = new InetSocketAddress(unreachablePeer(), 4000);
        a.setOption(RdsSocketOptions.SO_SNDBUF, 10_000);
        assertEquals(20_000, a.getOption(RdsSocketOptions.SO_SNDBUF), "Linux doubles the value");
        assertEquals(0, sendQueued(a));
        assertTrue(a.isWritable());
        a.configureBlocking(false);
        assertEquals(4000, a.send(ByteBuffer.allocate(4000), nowhere));      // held 0 before
        assertEquals(4000, a.send(ByteBuffer.allocate(4000), nowhere));      // held 4000
        assertTrue(a.isWritable(), "8000 < 10000");
        assertEquals(4000, a.send(ByteBuffer.allocate(4000), nowhere));      // held 8000 < 10000: overshoots
        assertEquals(12_000, sendQueued(a), "held bytes count from send() until released");
        assertFalse(a.isWritable(), "12000 >= 10000: no POLLOUT");
        ByteBuffer one = ByteBuffer.allocate(1);
        assertThrows(EagainException.class, () -> a.send(one, nowhere));
        assertEquals(0, one.position(), "a refused send consumes nothing");
        assertThrows(EmsgsizeException.class, () -> a.send(ByteBuffer.allocate(10_001), nowhere),
                "payload above the budget: EMSGSIZE, checked before the budget");

        a.configureBlocking(true);
        a.setOption(RdsSocketOptions.SO_SNDTIMEO, Duration.ofMillis(200));
        long start = System.nanoTime();
        assertThrows(EtimedoutException.class, () -> a.send(ByteBuffer.allocate(1), nowhere));
        long waited = System.nanoTime() - start;
        assertTrue(waited >= TimeUnit.MILLISECONDS.toNanos(190), "waited SO_SNDTIMEO, only " + waited + " ns");
        assertEquals(12_000, sendQueued(a), "failed sends hold nothing");
        assertTrue(counter(hostA, "send_queue_full") >= 2);

        a.cancelSentTo(nowhere);
        assertEquals(0, sendQueued(a));
        assertTrue(a.isWritable());
        assertEquals(10_000, a.send(ByteBuffer.allocate(10_000), nowhere), "exactly the budget fits when empty");

        a.setOption(RdsSocketOptions.SO_SNDBUF, 4 * MIB);
        assertThrows(EmsgsizeException.class, () -> a.send(ByteBuffer.allocate(MIB + 1), nowhere),
                "more than RDS_MAX_MSG_SIZE, whatever the budget");
        a.cancelSentTo(nowhere);
    }

    /**
     * protocol.md "Socket calls" / docs/reliability.md: bytes are held until the peer acknowledges, so a sender never holds more than
     * its budget plus one message, a blocking sender waits for acknowledgements rather than failing, and once
     * everything is acknowledged RDS_SEND_QUEUED is 0 and the peer has every message in order.
     */
    @Test
    void heldBytesStayWithinTheBudgetAndReturnToZeroOnceAcknowledged() throws Exception {
        RdsSocket a = socket(hostA, addressA(), 4000);
        RdsSocket b = socket(hostB, addressB(), 4000);
        b.setOption(RdsSocketOptions.SO_RCVBUF, 2 * MIB);          // never congested: only the send budget limits
        a.setOption(RdsSocketOptions.SO_SNDBUF, 8192);
        int budget = 8192;
        int size = 3000;
        int count = 200;
        long maxHeld = 0;
        for (int i = 0; i < count; i++) {
            a.send(message(size, i, 0), b.localAddress());                  // blocking: waits for acks
            maxHeld = Math.max(maxHeld, sendQueued(a));
        }
        assertTrue(maxHeld <= budget - 1 + size, "held " + maxHeld + " > budget + one message");
        assertTrue(a.awaitSent(Duration.ofSeconds(30)));
        assertEquals(0, sendQueued(a));
        assertTrue(a.isWritable());
        for (int i = 0; i < count; i++) {
            RdsDatagram d = b.receive(Duration.ofSeconds(30)).orElseThrow();
            assertEquals(i, d.payload().getLong(0));
        }
    }

    // ------------------------------------------------------------------------------------------------ congestion

    /**
     * protocol.md "Congestion maps": unread payload above SO_RCVBUF/2 marks the port in the receiver's local map, and the map reaches
     * the sender's host; a non-blocking send to it fails with ENOBUFS (cong_send_error). Messages already in flight
     * are accepted, never dropped (soft limit). Reading below budget/2 clears the bit and a new map lets sends
     * through again. Nothing is lost, order is kept.
     */
    @Test
    void aCongestedPortRefusesNonBlockingSendsWithEnobufsUntilItsReceiverDrains() throws Exception {
        RdsSocket a = socket(hostA, addressA(), 4000);
        RdsSocket b = socket(hostB, addressB(), 4000);
        b.setOption(RdsSocketOptions.SO_RCVBUF, RCV_BUDGET);
        assertEquals(2 * RCV_BUDGET, b.getOption(RdsSocketOptions.SO_RCVBUF));
        int size = 1000;
        long errorsBefore = counter(hostA, "cong_send_error");
        int sent = sendUntilEnobufs(a, b.localAddress(), size, 0);
        assertTrue(counter(hostA, "cong_send_error") > errorsBefore, "ENOBUFS counts cong_send_error");
        assertTrue(locallyCongested(hostB, b.localAddress()), "the receiver's own map marks its port");
        assertTrue(peerSeesCongested(hostA, b.localAddress()), "the sender's copy of the peer's map marks it");
        assertTrue((long) sent * size > RCV_BUDGET, "congested only above the budget: " + sent + " messages");
        // In flight when the port congested: at most the sender's budget plus its overshooting message.
        long bound = RCV_BUDGET + size + DEFAULT_SND_BUDGET + size;
        assertTrue((long) sent * size <= bound, sent * size + " bytes accepted > " + bound);
        ByteBuffer refused = ByteBuffer.allocate(1);
        assertThrows(EnobufsException.class, () -> a.send(refused, b.localAddress()),
                "still congested while nobody reads");
        assertEquals(0, refused.position(), "a refused send leaves the caller's buffer as it was");

        // Soft limit: everything accepted before the refusal is acknowledged and queued at the receiver.
        assertTrue(a.awaitSent(Duration.ofSeconds(30)));
        assertEquals((long) sent * size, unreadBytes(hostB), "in-flight messages were accepted, none dropped");

        // Drain to below budget/2: the bit clears and a new map follows (the hysteresis of protocol.md "Congestion maps").
        int next = 0;
        while (unreadBytes(hostB) >= RCV_BUDGET / 2) {
            assertTrue(locallyCongested(hostB, b.localAddress()), "cleared before queued < budget/2");
            assertEquals(next++, b.receive(Duration.ofSeconds(10)).orElseThrow().payload().getLong(0));
        }
        assertFalse(locallyCongested(hostB, b.localAddress()), "cleared once queued < budget/2");
        waitUntil(() -> !peerSeesCongested(hostA, b.localAddress()), Duration.ofSeconds(10),
                "the cleared map reached host A");
        assertEquals(size, a.send(message(size, sent, 4000), b.localAddress()), "sends go through again");
        for (int i = next; i <= sent; i++) {
            assertEquals(i, b.receive(Duration.ofSeconds(10)).orElseThrow().payload().getLong(0), "order kept");
        }
        assertTrue(b.receive(Duration.ofMillis(50)).isEmpty(), "nothing extra");
    }

    /**
     * protocol.md "Congestion maps": a blocking send to a congested port sleeps until the bit clears, with no timeout
     * while SO_SNDTIMEO is unset (as the kernel), counting cong_send_blocked; then it succeeds, and its message
     * arrives after the earlier ones.
     */
    @Test
    void aBlockingSendToACongestedPortWaitsWithoutTimeoutUntilTheMapClears() throws Exception {
        RdsSocket a = socket(hostA, addressA(), 4000);
        RdsSocket a2 = socket(hostA, addressA(), 4001);
        RdsSocket b = socket(hostB, addressB(), 4000);
        b.setOption(RdsSocketOptions.SO_RCVBUF, RCV_BUDGET);
        int sent = sendUntilEnobufs(a, b.localAddress(), 1000, 0);
        long blockedBefore = counter(hostA, "cong_send_blocked");
        byte[] callers = {7, 7, 7};
        CompletableFuture<Integer> blocked = CompletableFuture.supplyAsync(() -> {
            try {
                return a2.send(ByteBuffer.wrap(callers), b.localAddress());
            } catch (IOException e) {
                throw new RuntimeException(e);
            }
        });
        waitUntil(() -> counter(hostA, "cong_send_blocked") > blockedBefore, Duration.ofSeconds(10),
                "the blocking send counts cong_send_blocked");
        // The payload was copied before the wait, as the kernel's rds_sendmsg copies before rds_cong_wait: what the
        // caller writes into its buffer now is not sent.
        Arrays.fill(callers, (byte) 9);
        // Still waiting: without SO_SNDTIMEO the congestion wait has no timeout.
        assertThrows(TimeoutException.class, () -> blocked.get(400, TimeUnit.MILLISECONDS));
        for (int i = 0; i < sent; i++) {
            RdsDatagram d = b.receive(Duration.ofSeconds(10)).orElseThrow();
            assertEquals(i, d.payload().getLong(0));
            assertEquals(a.localAddress(), d.source());
        }
        assertEquals(3, blocked.get(10, TimeUnit.SECONDS), "the send completes once the map clears");
        RdsDatagram last = b.receive(Duration.ofSeconds(10)).orElseThrow();
        assertEquals(a2.localAddress(), last.source());
        assertArrayEquals(new byte[] {7, 7, 7}, bytes(last), "the bytes as they were when send was called");
    }

    /**
     * buffers-and-congestion.md, section 2: with SO_SNDTIMEO set, a blocking send to a congested port gives up after
     * it with ETIMEDOUT (rds4j's bound; the kernel's wait has none), having sent nothing; the one thread that sends
     * to a socket it then reads, as a first program does, therefore fails instead of hanging. Once the receiver reads,
     * sending works again.
     */
    @Test
    void soSndtimeoBoundsTheWaitForACongestedPortWithEtimedout() throws Exception {
        RdsSocket a = socket(hostA, addressA(), 4000);
        RdsSocket b = socket(hostB, addressB(), 4000);
        Duration timeout = Duration.ofMillis(300);
        a.setOption(RdsSocketOptions.SO_SNDTIMEO, timeout);
        long blockedBefore = counter(hostA, "cong_send_blocked");
        // One thread, 1,000 messages of 1,000 bytes, nobody reading yet: the port congests at half of SO_RCVBUF.
        int sent = 0;
        long start = 0;
        EtimedoutException timedOut = null;
        for (; sent < 1000; sent++) {
            start = System.nanoTime();
            try {
                a.send(message(1000, sent, 4000), b.localAddress());
            } catch (EtimedoutException e) {
                timedOut = e;
                break;
            }
        }
        long waited = System.nanoTime() - start;
        assertTrue(timedOut != null, "1,000 sends of 1,000 B to an unread socket must time out, all " + sent
                + " went through");
        assertTrue(waited >= timeout.toNanos() - TimeUnit.MILLISECONDS.toNanos(10), "gave up after " + waited
                + " ns, before SO_SNDTIMEO");
        assertTrue(timedOut.getMessage().contains("congested"), timedOut.getMessage());
        assertTrue(counter(hostA, "cong_send_blocked") > blockedBefore, "the wait counted cong_send_blocked");
        // Nothing of the timed-out send was queued: the receiver gets exactly the messages before it, in order.
        for (int i = 0; i < sent; i++) {
            assertEquals(i, b.receive(Duration.ofSeconds(10)).orElseThrow().payload().getLong(0), "order kept");
        }
        assertEquals(1000, a.send(message(1000, sent, 4000), b.localAddress()), "sends go through once read");
        assertEquals(sent, b.receive(Duration.ofSeconds(10)).orElseThrow().payload().getLong(0));
        assertTrue(b.receive(Duration.ofMillis(50)).isEmpty(), "nothing extra");
    }

    /**
     * protocol.md "Congestion maps" end to end: several blocking senders on host A, a receiver on host B that stalls (reads nothing)
     * until its port is congested, then drains, over and over. At every stall the unread bytes stay within the
     * receive budget plus what could be in flight when the port congested (each sender's send budget plus one
     * overshooting message, and the crossing message); senders block and resume; nothing is lost, per-sender order
     * is kept.
     */
    @Test
    void slowReceiverWithSeveralSendersLosesNothingAndStaysWithinItsBudgetPlusInFlight() throws Exception {
        int senders = 4;
        int perSender = 600;
        int size = 1024;
        int sndbuf = 8192;
        RdsSocket b = socket(hostB, addressB(), 4000);
        b.setOption(RdsSocketOptions.SO_RCVBUF, RCV_BUDGET);
        List<RdsSocket> out = new ArrayList<>();
        for (int i = 0; i < senders; i++) {
            RdsSocket s = socket(hostA, addressA(), 5000 + i);
            s.setOption(RdsSocketOptions.SO_SNDBUF, sndbuf);
            out.add(s);
        }
        // Per sender: its budget plus the overshooting message (held when the port congested), plus one message
        // that had passed the congestion check (protocol.md "Socket calls": congestion, then budget) while waiting for budget; and,
        // since the senders' sockets use different lanes of the connection's paths, one budget more: every lane
        // carries each map, and a lane's older map (clear) can arrive after another lane's newer one (congested),
        // letting a sender refill its budget once before its own lane's newer copy lands.
        long bound = RCV_BUDGET + size + (long) senders * (2L * sndbuf + 2L * size);
        ExecutorService pool = Executors.newFixedThreadPool(senders);
        try {
            List<Future<?>> sends = new ArrayList<>();
            for (RdsSocket s : out) {
                sends.add(pool.submit(() -> {
                    for (int k = 0; k < perSender; k++) {
                        s.send(message(size, k, s.localAddress().getPort()), b.localAddress());
                    }
                    return null;
                }));
            }
            Map<Integer, Long> next = new HashMap<>();
            int received = 0;
            int stalls = 0;
            long maxUnread = 0;
            while (received < senders * perSender) {
                // Stall: read nothing until the port is congested (or the senders are done).
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
                while (!locallyCongested(hostB, b.localAddress()) && !sends.stream().allMatch(Future::isDone)) {
                    assertTrue(System.nanoTime() < deadline, "the port never congested");
                    LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
                }
                if (locallyCongested(hostB, b.localAddress())) {
                    stalls++;
                }
                // Let what is in flight land (it may not be dropped): wait until the senders' host holds nothing
                // it could still deliver, or a little while.
                waitForQuiet(out, Duration.ofMillis(300));
                long unread = unreadBytes(hostB);
                maxUnread = Math.max(maxUnread, unread);
                assertTrue(unread <= bound, "unread " + unread + " > budget + in flight " + bound);
                // Drain what is queued now, then stall again.
                RdsDatagram d;
                while ((d = b.receive(Duration.ZERO).orElse(null)) != null) {
                    int port = d.source().getPort();
                    long seq = d.payload().getLong(0);
                    assertEquals(next.getOrDefault(port, 0L), seq, "order from " + d.source());
                    assertEquals(port, d.payload().getInt(8));
                    next.put(port, seq + 1);
                    received++;
                }
            }
            for (Future<?> f : sends) {
                f.get(30, TimeUnit.SECONDS);
            }
            assertTrue(b.receive(Duration.ofMillis(50)).isEmpty(), "nothing extra");
            assertTrue(stalls >= 2, "congestion cycled only " + stalls + " times");
            assertTrue(counter(hostA, "cong_send_blocked") > 0, "senders blocked on congestion");
            System.out.printf("[%s] slow receiver: %d stalls, max unread %d bytes (bound %d), cong_send_blocked %d%n",
                    transport(), stalls, maxUnread, bound, counter(hostA, "cong_send_blocked"));
        } finally {
            pool.shutdownNow();
        }
    }

    /** Waits until every socket holds nothing unacknowledged, or {@code max} passes (senders may be blocked). */
    private static void waitForQuiet(List<RdsSocket> out, Duration max) throws IOException {
        long deadline = System.nanoTime() + max.toNanos();
        for (RdsSocket s : out) {
            long left = deadline - System.nanoTime();
            if (left <= 0 || !s.awaitSent(Duration.ofNanos(left))) {
                return;
            }
        }
    }

    /**
     * The heap stays flat while 8 fast senders, each on a host of its own, overrun one slow reader on
     * host B for a few seconds. Everything the stacks may hold is bounded by the budgets — 8 × (send budget + one message) at the
     * senders plus the receiver's budget and what was in flight, about 1 MiB here — so heap used after GC must stay
     * within start + 64 MiB (room for GC noise and JIT) and show no upward trend: the last samples may not exceed
     * the first ones by more than 16 MiB.
     */
    @Test
    void heapStaysFlatWhileEightFastSendersOverrunASlowReceiver() throws Exception {
        int senders = 8;
        int size = 2048;
        RdsSocket b = socket(hostB, addressB(), 4000);
        b.setOption(RdsSocketOptions.SO_RCVBUF, RCV_BUDGET);
        List<RdsSocket> out = new ArrayList<>();
        List<RdsStack> senderHosts = new ArrayList<>();
        for (int i = 0; i < senders; i++) {
            RdsStack host = otherHost("sender" + i, i);
            senderHosts.add(host);
            RdsSocket s = socket(host, h().otherHost(i), 5000 + i);
            s.setOption(RdsSocketOptions.SO_SNDBUF, 65_536);
            out.add(s);
        }
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong sentCount = new AtomicLong();
        ExecutorService pool = Executors.newFixedThreadPool(senders + 1);
        try {
            List<Future<?>> sends = new ArrayList<>();
            for (RdsSocket s : out) {
                sends.add(pool.submit(() -> {
                    long k = 0;
                    try {
                        while (!stop.get()) {
                            s.send(message(size, k++, s.localAddress().getPort()), b.localAddress());
                            sentCount.incrementAndGet();
                        }
                    } catch (EbadfException closed) {
                        // closed at the end of the test while blocked on congestion
                    }
                    return k;
                }));
            }
            Map<InetSocketAddress, Long> next = new ConcurrentHashMap<>();
            AtomicLong received = new AtomicLong();
            CountDownLatch never = new CountDownLatch(1);
            Future<?> reader = pool.submit(() -> {
                while (!stop.get()) {
                    // Slow: stall ~20 ms between bursts (a deliberate pause, on a latch nobody counts down).
                    never.await(20, TimeUnit.MILLISECONDS);
                    for (int n = 0; n < 16; n++) {
                        RdsDatagram d = b.receive(Duration.ofMillis(5)).orElse(null);
                        if (d == null) {
                            break;
                        }
                        InetSocketAddress from = d.source();
                        long seq = d.payload().getLong(0);
                        long want = next.getOrDefault(from, 0L);
                        if (seq != want) {
                            throw new AssertionError("from " + from + " got " + seq + ", expected " + want);
                        }
                        next.put(from, seq + 1);
                        received.incrementAndGet();
                    }
                }
                return null;
            });
            // What host B may hold unread: its budget and the crossing message, plus per sender its budget, the
            // overshooting message and one that passed the congestion check (protocol.md "Congestion maps", "Socket calls").
            long unreadBound = RCV_BUDGET + size + senders * (65_536L + 2L * size);
            long maxUnread = 0;
            long[] samples = new long[6];
            samples[0] = usedAfterGc();
            for (int i = 1; i < samples.length; i++) {
                never.await(700, TimeUnit.MILLISECONDS);               // let congestion cycle for a while
                if (reader.isDone()) {
                    reader.get();                                    // surface an order failure
                }
                samples[i] = usedAfterGc();
                maxUnread = Math.max(maxUnread, unreadBytes(hostB));
            }
            System.out.printf("[%s] heap test: max unread at samples %d bytes (bound %d)%n", transport(), maxUnread,
                    unreadBound);
            assertTrue(maxUnread <= unreadBound, "the slow receiver holds " + maxUnread + " unread bytes > "
                    + unreadBound + ": congestion stopped stopping the senders");
            stop.set(true);
            reader.get(10, TimeUnit.SECONDS);
            for (RdsSocket s : out) {
                s.close();                                           // wakes senders blocked on congestion
            }
            for (Future<?> f : sends) {
                f.get(10, TimeUnit.SECONDS);
            }
            long[] mib = Arrays.stream(samples).map(v -> v >> 20).toArray();
            long blocked = 0;
            for (RdsStack host : senderHosts) {
                blocked += counter(host, "cong_send_blocked");
            }
            System.out.printf("[%s] heap after GC (MiB): %s; sent %d, received %d, cong_send_blocked %d%n",
                    transport(), Arrays.toString(mib), sentCount.get(), received.get(), blocked);
            assertTrue(received.get() > 100, "the receiver made progress: " + received.get());
            assertTrue(blocked > 0, "congestion cycled");
            for (long s : samples) {
                assertTrue(s <= samples[0] + 64L * MIB, "heap grew beyond start + 64 MiB: " + Arrays.toString(mib));
            }
            long early = Math.max(samples[1], samples[2]);
            long late = Math.max(samples[4], samples[5]);
            assertTrue(late <= early + 16L * MIB, "heap trends upward: " + Arrays.toString(mib));
        } finally {
            stop.set(true);
            pool.shutdownNow();
        }
    }

    /** Heap used after a full collection ({@code System.gc()}; the module graph gives tests no java.management). */
    private static long usedAfterGc() {
        Runtime rt = Runtime.getRuntime();
        System.gc();
        return rt.totalMemory() - rt.freeMemory();
    }

    /**
     * protocol.md "Congestion notifications": with RDS_CONG_MONITOR on, a non-blocking send that fails with ENOBUFS adds bit
     * (port % 64) to the monitor mask; the next map from the peer (the receiver drains) makes the socket readable
     * (POLLIN, seen by a selector) and receive() returns a CONGESTION_UPDATE with that bit, ahead of any data.
     */
    @Test
    void congestionMonitorReportsTheMonitoredPortWhenThePeersMapChanges() throws Exception {
        int port = 4020;                                            // 4020 % 64 = 52
        long bit = 1L << (port % 64);
        RdsSocket a = socket(hostA, addressA(), 4000);
        RdsSocket b = socket(hostB, addressB(), port);
        b.setOption(RdsSocketOptions.SO_RCVBUF, RCV_BUDGET);
        a.setOption(RdsSocketOptions.RDS_CONG_MONITOR, true);
        assertTrue(a.getOption(RdsSocketOptions.RDS_CONG_MONITOR));

        try (RdsSelector selector = hostA.openSelector()) {
            selector.register(a, RdsSelector.OP_READ);
            // Phase 1: the notification alone makes the socket readable.
            int sent = sendUntilEnobufs(a, b.localAddress(), 1000, 0);
            assertFalse(a.isReadable(), "nothing to read yet");
            assertEquals(0, selector.select(Duration.ZERO, (s, ops) -> fail("not ready yet: " + s)));
            for (int i = 0; i < sent; i++) {
                b.receive(Duration.ofSeconds(10)).orElseThrow();
            }
            List<RdsSocket> ready = new ArrayList<>();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (ready.isEmpty() && System.nanoTime() < deadline) {
                selector.select(Duration.ofSeconds(1), (s, ops) -> {
                    assertEquals(RdsSelector.OP_READ, ops);
                    ready.add(s);
                });
            }
            assertEquals(List.of(a), ready, "the selector reports the monitoring socket readable");
            RdsDatagram note = a.receive();
            assertEquals(RdsDatagram.Kind.CONGESTION_UPDATE, note.kind());
            assertEquals(bit, note.congestionMask() & bit, "bit port % 64 fired: " + note);
            assertEquals(0, note.length());
            assertNull(note.source());
            assertFalse(a.isReadable(), "the notification was consumed");

            // Phase 2: with data queued too, the notification comes first (protocol.md "Socket calls", receive). The data is
            // queued while the mask is empty: any map that arrives once the port is in the mask may fire it, a late
            // copy of phase 1's clearing map on another path included (a notification means "something changed").
            b.send(ByteBuffer.wrap(new byte[] {1, 2, 3, 4}), a.localAddress());
            RdsMessageInfo info = new RdsMessageInfo();
            ByteBuffer dst = ByteBuffer.allocate(64);
            waitForPeekKind(a, dst, info, RdsDatagram.Kind.DATA);
            sent = sendUntilEnobufs(a, b.localAddress(), 1000, 1000);
            for (int i = 0; i < sent; i++) {
                b.receive(Duration.ofSeconds(10)).orElseThrow();
            }
            waitForPeekKind(a, dst, info, RdsDatagram.Kind.CONGESTION_UPDATE);
            assertEquals(0, a.receive(dst.clear(), info, 0), "a notification copies nothing");
            assertEquals(RdsDatagram.Kind.CONGESTION_UPDATE, info.kind());
            assertEquals(bit, info.congestionMask() & bit);
            assertEquals(4, a.receive(dst.clear(), info, 0));
            assertEquals(RdsDatagram.Kind.DATA, info.kind());
            assertEquals(b.localAddress(), info.source());

            // Turning monitoring off clears mask and pending notifications (protocol.md "Congestion notifications").
            sendUntilEnobufs(a, b.localAddress(), 1000, 2000);
            a.setOption(RdsSocketOptions.RDS_CONG_MONITOR, false);
            while (b.receive(Duration.ofMillis(200)).isPresent()) {
                // drain
            }
            waitUntil(() -> !peerSeesCongested(hostA, b.localAddress()), Duration.ofSeconds(10), "map cleared");
            assertFalse(a.isReadable(), "no notification with monitoring off");
        }
    }

    /** Peeks until the next item is of {@code kind} (waits for an arrival the API reports no other way). */
    private static void waitForPeekKind(RdsSocket s, ByteBuffer dst, RdsMessageInfo info, RdsDatagram.Kind kind) {
        String[] seen = {"nothing"};
        try {
            waitUntil(() -> {
                try {
                    s.receive(dst.clear(), info, RdsSocket.MSG_PEEK | RdsSocket.MSG_DONTWAIT);
                    seen[0] = info.kind() + " (mask 0x" + Long.toHexString(info.congestionMask()) + ")";
                    return info.kind() == kind;
                } catch (EagainException e) {
                    seen[0] = "nothing";
                    return false;
                } catch (IOException e) {
                    throw new RuntimeException(e);
                }
            }, Duration.ofSeconds(10), "a " + kind + " is next on " + s);
        } catch (AssertionError e) {
            throw new AssertionError(e.getMessage() + "; next was " + seen[0] + "; " + s.stack().counters(), e);
        }
    }

    // ------------------------------------------------------------------------------------------------ cancel

    /**
     * protocol.md "Socket calls", RDS_CANCEL_SENT_TO (plus rds4j's RDS_RECVERR reporting): drops this socket's messages to one
     * address:port, returning their bytes; one SEND_FAILED (CANCELLED, destination, length) per message arrives
     * ahead of data; other destinations are unaffected; none of them arrives later, also once the peer is up.
     * Unbound: ENOTCONN.
     */
    @Test
    void cancelSentToDropsOnlyThatDestinationAndReportsEachMessage() throws Exception {
        try (RdsSocket unbound = hostA.openSocket()) {
            assertThrows(EnotconnException.class,
                    () -> unbound.cancelSentTo(new InetSocketAddress(addressB(), 4000)));
        }
        RdsSocket a = socket(hostA, addressA(), 4000);
        RdsSocket b = socket(hostB, addressB(), 4000);
        a.setOption(RdsSocketOptions.RDS_RECVERR, true);
        assertTrue(a.getOption(RdsSocketOptions.RDS_RECVERR));
        InetSocketAddress gone = new InetSocketAddress(unreachablePeer(), 4000);
        InetSocketAddress other = new InetSocketAddress(unreachablePeer(), 4001);
        int[] sizes = {100, 200, 300};
        for (int i = 0; i < sizes.length; i++) {
            a.send(message(sizes[i], i, 0), gone);
        }
        a.send(message(50, 0, 0), other);
        a.send(message(60, 1, 0), other);
        assertEquals(710, sendQueued(a));
        // Data queued on a before the cancel: the failures must come ahead of it.
        b.send(ByteBuffer.wrap(new byte[] {9}), a.localAddress());
        RdsMessageInfo info = new RdsMessageInfo();
        ByteBuffer dst = ByteBuffer.allocate(16);
        waitForPeekKind(a, dst, info, RdsDatagram.Kind.DATA);

        a.cancelSentTo(gone);
        assertEquals(110, sendQueued(a), "the cancelled bytes returned; the other destination keeps its 110");
        List<Integer> failed = new ArrayList<>();
        for (int i = 0; i < sizes.length; i++) {
            RdsDatagram d = a.receive(Duration.ofSeconds(5)).orElseThrow();
            assertEquals(RdsDatagram.Kind.SEND_FAILED, d.kind(), "failure " + i + " ahead of data: " + d);
            assertEquals(RdsDatagram.Failure.CANCELLED, d.failure());
            assertEquals(gone, d.source());
            failed.add(d.length());
        }
        failed.sort(null);
        assertEquals(List.of(100, 200, 300), failed);
        RdsDatagram data = a.receive(Duration.ofSeconds(5)).orElseThrow();
        assertEquals(RdsDatagram.Kind.DATA, data.kind(), "exactly one notification per message");
        assertEquals(b.localAddress(), data.source());
        a.cancelSentTo(gone);                                       // nothing left: no-op
        assertFalse(a.isReadable());

        // The peer comes up: the other destination's messages arrive, the cancelled ones never do.
        RdsStack hostC = closedAfterTest(newStack("hostC", unreachablePeer(), 2));
        RdsSocket c0 = socket(hostC, unreachablePeer(), 4000);
        RdsSocket c1 = socket(hostC, unreachablePeer(), 4001);
        a.send(ByteBuffer.wrap(new byte[] {42}), gone);             // a marker after the cancelled ones
        assertEquals(1, c0.receive(Duration.ofSeconds(30)).orElseThrow().length(),
                "the marker is the first (and only) message at the cancelled destination");
        assertEquals(50, c1.receive(Duration.ofSeconds(30)).orElseThrow().length());
        assertEquals(60, c1.receive(Duration.ofSeconds(30)).orElseThrow().length());
        assertTrue(a.awaitSent(Duration.ofSeconds(30)));
        assertEquals(0, sendQueued(a));
        assertTrue(c0.receive(Duration.ofMillis(100)).isEmpty(), "no cancelled message arrived late");
        assertFalse(a.isReadable(), "delivered messages produce no failure");
    }

    // ------------------------------------------------------------------------------------------------ recvmsg

    /**
     * protocol.md "Socket calls", receive: MSG_PEEK leaves the message queued; a short buffer gets what fits with MSG_TRUNC (truncated,
     * full length) and the rest is discarded; MSG_DONTWAIT on a blocking socket with nothing queued is EAGAIN;
     * the arrival time lies between the send and the receive; a 0-byte message returns 0.
     */
    @Test
    void receiveFlagsPeekTruncateAndDontwaitFollowRecvmsg() throws Exception {
        RdsSocket a = socket(hostA, addressA(), 4000);
        RdsSocket b = socket(hostB, addressB(), 4000);
        RdsMessageInfo info = new RdsMessageInfo();
        assertTrue(b.isBlocking());
        assertThrows(EagainException.class,
                () -> b.receive(ByteBuffer.allocate(8), info, RdsSocket.MSG_DONTWAIT));
        assertThrows(EagainException.class,
                () -> b.receive(ByteBuffer.allocate(8), info, RdsSocket.MSG_DONTWAIT | RdsSocket.MSG_PEEK));

        byte[] first = new byte[100];
        new SplittableRandom(1).nextBytes(first);
        long before = System.nanoTime();
        a.send(ByteBuffer.wrap(first), b.localAddress());
        a.send(ByteBuffer.wrap(new byte[] {5, 6}), b.localAddress());
        a.send(ByteBuffer.allocate(0), b.localAddress());

        ByteBuffer big = ByteBuffer.allocate(256);
        assertEquals(100, b.receive(big, info, RdsSocket.MSG_PEEK), "peek waits (blocking) and copies");
        assertEquals(100, info.length());
        assertFalse(info.truncated());
        assertEquals(a.localAddress(), info.source());
        assertEquals(4000, info.destinationPort());
        long peekedArrival = info.arrivalNanos();
        ByteBuffer small = ByteBuffer.allocate(10);
        assertEquals(10, b.receive(small, info, RdsSocket.MSG_PEEK));
        assertTrue(info.truncated(), "a short buffer with MSG_PEEK is still MSG_TRUNC");
        assertEquals(100, info.length());
        assertEquals(10, small.position());
        assertTrue(b.isReadable(), "peek left it queued");

        small.clear();
        assertEquals(10, b.receive(small, info, 0));
        long after = System.nanoTime();
        assertTrue(info.truncated());
        assertEquals(100, info.length(), "the full length, not the copied one");
        assertArrayEquals(Arrays.copyOf(first, 10), Arrays.copyOf(small.array(), 10));
        assertEquals(peekedArrival, info.arrivalNanos());
        assertTrue(info.arrivalNanos() - before >= 0 && after - info.arrivalNanos() >= 0,
                "arrival " + info.arrivalNanos() + " not in [" + before + ", " + after + "]");

        big.clear().position(3);
        assertEquals(2, b.receive(big, info, 0),
                "the rest of the truncated message was discarded: the next message follows");
        assertEquals(5, big.get(3));
        assertEquals(6, big.get(4));
        assertEquals(5, big.position(), "copied at the buffer's position");
        assertFalse(info.truncated());

        assertEquals(0, b.receive(big.clear(), info, 0));
        assertEquals(0, info.length());
        assertFalse(info.truncated());
        assertFalse(b.isReadable());
        assertThrows(EagainException.class, () -> b.receive(big.clear(), info, RdsSocket.MSG_DONTWAIT));
    }

    // ------------------------------------------------------------------------------------------------ poll

    /**
     * protocol.md "Socket calls", poll: POLLIN while something is queued, POLLOUT while held < budget (it does not promise the send
     * succeeds: a congested destination still gives ENOBUFS).
     */
    @Test
    void readinessMatchesPollinAndPollout() throws Exception {
        RdsSocket a = socket(hostA, addressA(), 4000);
        RdsSocket b = socket(hostB, addressB(), 4000);
        b.setOption(RdsSocketOptions.SO_RCVBUF, RCV_BUDGET);
        assertFalse(b.isReadable());
        assertTrue(b.isWritable());
        a.send(ByteBuffer.allocate(10), b.localAddress());
        b.receive(ByteBuffer.allocate(10), new RdsMessageInfo(), RdsSocket.MSG_PEEK);   // waits for arrival
        assertTrue(b.isReadable());
        b.receive();
        assertFalse(b.isReadable());

        sendUntilEnobufs(a, b.localAddress(), 1000, 0);
        assertTrue(a.awaitSent(Duration.ofSeconds(30)));
        assertTrue(a.isWritable(), "POLLOUT although the destination is congested");
        assertThrows(EnobufsException.class, () -> a.send(ByteBuffer.allocate(1), b.localAddress()));
    }

    /**
     * Selector over the sockets of one stack (protocol.md "Socket calls": level-triggered like poll): each socket of a seeded random
     * subset that gets a message is reported; a socket not drained is reported again; drained ones are not.
     */
    @Test
    void selectorReportsExactlyTheReadableSocketsLevelTriggered() throws Exception {
        long seed = System.nanoTime();
        System.out.println("[" + transport() + "] selector subset seed " + seed);
        SplittableRandom random = new SplittableRandom(seed);
        int n = 32;
        RdsSocket a = socket(hostA, addressA(), 4000);
        List<RdsSocket> bs = new ArrayList<>();
        try (RdsSelector selector = hostB.openSelector()) {
            for (int i = 0; i < n; i++) {
                RdsSocket s = socket(hostB, addressB(), 6000 + i);
                s.configureBlocking(false);
                selector.register(s, RdsSelector.OP_READ);
                bs.add(s);
            }
            assertEquals(0, selector.select(Duration.ofMillis(20), (s, ops) -> fail("nothing is ready: " + s)));
            Set<RdsSocket> chosen = new HashSet<>();
            for (RdsSocket s : bs) {
                if (random.nextBoolean()) {
                    chosen.add(s);
                }
            }
            chosen.add(bs.get(random.nextInt(n)));
            for (RdsSocket s : chosen) {
                a.send(ByteBuffer.allocate(4), s.localAddress());
            }
            // Report each chosen socket, without draining: all must be reported, nothing else.
            Set<RdsSocket> seen = new HashSet<>();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (seen.size() < chosen.size()) {
                assertTrue(System.nanoTime() < deadline, "reported " + seen.size() + " of " + chosen.size());
                selector.select(Duration.ofSeconds(1), (s, ops) -> {
                    assertEquals(RdsSelector.OP_READ, ops);
                    assertTrue(chosen.contains(s), "reported a socket with nothing queued: " + s);
                    seen.add(s);
                });
            }
            // Level-triggered: every one of them is reported again by the next select, then drained.
            Set<RdsSocket> again = new HashSet<>();
            selector.select(Duration.ofSeconds(5), (s, ops) -> {
                again.add(s);
                s.receive();
            });
            assertEquals(chosen, again, "undrained sockets are reported again");
            assertEquals(0, selector.select(Duration.ofMillis(20), (s, ops) -> fail("drained: " + s)));
        }
    }

    /**
     * Selector OP_WRITE is POLLOUT: not reported while held >= budget, reported once bytes return (here by a
     * cancel, RDS_CANCEL_SENT_TO); sockets of another stack are refused with EINVAL; wakeup() ends a blocked select; a closed
     * socket is reported ready so that its next call fails with EBADF.
     */
    @Test
    void selectorWriteReadinessWakeupForeignSocketsAndClosedSockets() throws Exception {
        RdsSocket a = socket(hostA, addressA(), 4000);
        RdsSocket b = socket(hostB, addressB(), 4000);
        InetSocketAddress nowhere = new InetSocketAddress(unreachablePeer(), 4000);
        try (RdsSelector selector = hostA.openSelector()) {
            assertThrows(EinvalException.class, () -> selector.register(b, RdsSelector.OP_READ));
            assertThrows(EinvalException.class, () -> selector.register(a, 2));

            a.setOption(RdsSocketOptions.SO_SNDBUF, 4000);
            a.configureBlocking(false);
            a.send(ByteBuffer.allocate(4000), nowhere);
            assertFalse(a.isWritable());
            selector.register(a, RdsSelector.OP_WRITE);
            assertEquals(0, selector.select(Duration.ofMillis(50), (s, ops) -> fail("not writable")));
            a.cancelSentTo(nowhere);
            List<Integer> ops = new ArrayList<>();
            selector.select(Duration.ofSeconds(5), (s, o) -> ops.add(o));
            assertEquals(List.of(RdsSelector.OP_WRITE), ops, "writable once the bytes returned");

            selector.register(a, RdsSelector.OP_READ);              // replaces the registration
            assertEquals(0, selector.select(Duration.ZERO, (s, o) -> fail("not readable")));   // queue now empty
            CompletableFuture<Integer> blocked = CompletableFuture.supplyAsync(() -> {
                try {
                    return selector.select(Duration.ofSeconds(60), (s, o) -> fail("nothing is ready"));
                } catch (IOException e) {
                    throw new RuntimeException(e);
                }
            });
            selector.wakeup();                                      // before or during the select: it returns
            assertEquals(0, blocked.get(10, TimeUnit.SECONDS));

            RdsSocket doomed = socket(hostA, addressA(), 4001);
            selector.register(doomed, RdsSelector.OP_READ);
            CompletableFuture<RdsSocket> reported = CompletableFuture.supplyAsync(() -> {
                List<RdsSocket> got = new ArrayList<>();
                try {
                    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                    while (got.isEmpty() && System.nanoTime() < deadline) {
                        selector.select(Duration.ofSeconds(1), (s, o) -> {
                            assertEquals(RdsSelector.OP_READ, o);
                            got.add(s);
                        });
                    }
                } catch (IOException e) {
                    throw new RuntimeException(e);
                }
                return got.isEmpty() ? null : got.get(0);
            });
            doomed.close();
            assertEquals(doomed, reported.get(15, TimeUnit.SECONDS), "a closed socket is reported");
            assertThrows(EbadfException.class, doomed::receive);
            assertThrows(EbadfException.class, () -> doomed.receive(ByteBuffer.allocate(1),
                    new RdsMessageInfo(), RdsSocket.MSG_DONTWAIT));
        }
    }

    // ------------------------------------------------------------------------------------------------ scale

    /**
     * Scale: 10,000 sockets of host B served by two selector threads (5,000 sockets each, OP_READ); host A
     * sends one message to every one of the 10,000 ports from four sockets; each message is seen exactly once, on
     * the socket it was sent to, within a bounded time.
     */
    @Test
    @Timeout(value = 90, unit = TimeUnit.SECONDS)
    void tenThousandSocketsServedByTwoSelectorThreadsSeeEachMessageExactlyOnce() throws Exception {
        int n = 10_000;
        int firstPort = 10_000;
        int selectors = 2;
        int senders = 4;
        long t0 = System.nanoTime();
        List<RdsSocket> receivers = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            RdsSocket s = socket(hostB, addressB(), firstPort + i);
            s.configureBlocking(false);
            receivers.add(s);
        }
        List<RdsSelector> sels = new ArrayList<>();
        for (int k = 0; k < selectors; k++) {
            sels.add(hostB.openSelector());
        }
        for (int i = 0; i < n; i++) {
            sels.get(i % selectors).register(receivers.get(i), RdsSelector.OP_READ);
        }
        long bound = System.nanoTime();
        AtomicIntegerArray counts = new AtomicIntegerArray(n);
        AtomicLong total = new AtomicLong();
        AtomicBoolean done = new AtomicBoolean();
        List<String> errors = java.util.Collections.synchronizedList(new ArrayList<>());
        ExecutorService pool = Executors.newFixedThreadPool(selectors + senders);
        try {
            List<Future<?>> loops = new ArrayList<>();
            for (RdsSelector sel : sels) {
                loops.add(pool.submit(() -> {
                    ByteBuffer dst = ByteBuffer.allocate(64);
                    RdsMessageInfo info = new RdsMessageInfo();
                    while (!done.get()) {
                        sel.select(Duration.ofMillis(200), (s, ops) -> {
                            while (true) {
                                try {
                                    s.receive(dst.clear(), info, RdsSocket.MSG_DONTWAIT);
                                } catch (EagainException e) {
                                    return;                          // drained
                                }
                                int port = s.localAddress().getPort();
                                if (info.kind() != RdsDatagram.Kind.DATA || info.length() != 8
                                        || dst.getInt(0) != port || info.destinationPort() != port) {
                                    errors.add("socket " + port + " got " + info.kind() + " len " + info.length()
                                            + " for " + dst.getInt(0));
                                }
                                counts.incrementAndGet(port - firstPort);
                                total.incrementAndGet();
                            }
                        });
                    }
                    return null;
                }));
            }
            List<Future<?>> sends = new ArrayList<>();
            for (int k = 0; k < senders; k++) {
                RdsSocket a = socket(hostA, addressA(), 4000 + k);
                int from = k;
                sends.add(pool.submit(() -> {
                    ByteBuffer buf = ByteBuffer.allocate(8);
                    for (int i = from; i < n; i += senders) {
                        buf.clear();
                        buf.putInt(0, firstPort + i).putInt(4, from);
                        a.send(buf, new InetSocketAddress(addressB(), firstPort + i));
                    }
                    return null;
                }));
            }
            for (Future<?> f : sends) {
                f.get(60, TimeUnit.SECONDS);
            }
            long sentAt = System.nanoTime();
            long deadline = sentAt + TimeUnit.SECONDS.toNanos(60);
            while (total.get() < n) {
                assertTrue(System.nanoTime() < deadline, "only " + total.get() + " of " + n + " seen");
                for (Future<?> f : loops) {
                    if (f.isDone()) {
                        f.get();                                     // surface a selector thread's failure
                    }
                }
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(2));
            }
            long seenAt = System.nanoTime();
            // Give duplicates a chance to show: the selector threads keep selecting a little longer.
            CountDownLatch never = new CountDownLatch(1);
            never.await(200, TimeUnit.MILLISECONDS);
            done.set(true);
            for (RdsSelector sel : sels) {
                sel.wakeup();
            }
            for (Future<?> f : loops) {
                f.get(10, TimeUnit.SECONDS);
            }
            assertTrue(errors.isEmpty(), errors.stream().limit(5).toList().toString());
            List<Integer> wrong = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                if (counts.get(i) != 1) {
                    wrong.add(firstPort + i);
                }
            }
            assertTrue(wrong.isEmpty(), wrong.size() + " ports not seen exactly once, e.g. "
                    + wrong.stream().limit(10).map(p -> p + "=" + counts.get(p - firstPort)).toList());
            assertEquals(n, total.get());
            System.out.printf("[%s] 10k sockets: bind+register %d ms, send+deliver+select %d ms (all seen %d ms"
                            + " after the last send)%n", transport(), (bound - t0) / 1_000_000,
                    (seenAt - bound) / 1_000_000, (seenAt - sentAt) / 1_000_000);
        } finally {
            done.set(true);
            sels.forEach(RdsSelector::close);
            pool.shutdownNow();
        }
    }

    /** Sanity of the helpers' arithmetic against the API's documented defaults (protocol.md "Sizes and budgets"). */
    @Test
    void defaultBuffersAreTheLinuxOnes() throws Exception {
        RdsSocket a = socket(hostA, addressA(), 4000);
        assertEquals(2 * DEFAULT_SND_BUDGET, a.getOption(RdsSocketOptions.SO_SNDBUF));
        assertEquals(212_992, a.getOption(RdsSocketOptions.SO_RCVBUF));
        assertFalse(a.getOption(RdsSocketOptions.RDS_CONG_MONITOR));
        assertFalse(a.getOption(RdsSocketOptions.RDS_RECVERR));
        assertEquals(Duration.ZERO, a.getOption(RdsSocketOptions.SO_SNDTIMEO));
    }
}
