package org.rds4j.core.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.rds4j.RdsMessageInfo;
import org.rds4j.RdsSocket;
import org.rds4j.RdsSocketOptions;
import org.rds4j.RdsStack;

/**
 * The hot path allocates nothing per message in steady state: a sender that reuses its buffer and a receiver that
 * uses {@code receive(ByteBuffer, RdsMessageInfo, flags)} make the whole JVM (both stacks, every thread: senders,
 * I/O threads, timers) allocate at most {@link #BOUND_PER_MESSAGE} bytes per message over {@link #MESSAGES}
 * messages, after a warm-up of twice as many.
 *
 * <p>Allocation is deterministic enough to assert (unlike time): what the JVM counts per thread
 * ({@code com.sun.management.ThreadMXBean#getThreadAllocatedBytes}) over threads that live through the measured
 * phase. The bound is loose on purpose (the target is a few bytes); it catches any per-message object.
 *
 * <p>What is legitimately allocated in steady state is pool growth: arrivals queued for a reader, a loopback
 * writer's chunks, a TCP connection's batches. Each pool grows to the most its socket or connection ever holds at
 * once, which flow control bounds (receive and send budgets, the transport's high-water mark) but the scheduler
 * decides: a reader descheduled for longer than ever before makes the pools reach a new peak. So the warm-up stalls
 * the reader halfway until the sender is held back, which takes the pools to about what a stalled reader makes them
 * hold; and a measured phase in which a pool still reached a new peak (more than the bound, with the threads that
 * allocated listed) is followed by another, up to {@link #MAX_PHASES}. Pool growth is bounded, so it can spoil only
 * a phase or two; an object per message shows in every phase and fails the test.
 */
public abstract class AllocationContract extends HostsContract {
    static final int MESSAGES = 100_000;
    static final int BOUND_PER_MESSAGE = 64;
    /** Measured phases at most: a phase in which a pool grew to a new peak is followed by another. */
    static final int MAX_PHASES = 3;

    @Test
    void oneWay64ByteMessagesAllocateNothingPerMessage() throws Exception {
        assertSteadyStateAllocation(64);
    }

    @Test
    void oneWay8KiBMessagesAllocateNothingPerMessage() throws Exception {
        assertSteadyStateAllocation(8192);
    }

    /**
     * Payloads this large are lent to the transport's write instead of copied ({@code MessageBuffer.DIRECT_MIN}):
     * the frame's header and the payload leave as separate buffers, which must cost no object per write either.
     */
    @Test
    void oneWay64KiBMessagesAllocateNothingPerMessage() throws Exception {
        assertSteadyStateAllocation(64 * 1024, false, 1 << 20, MESSAGES / 20);
    }

    /**
     * The sender's stack did not open the connection: the peer did (a server answering its clients), so the
     * connection's peer address is an object of the transport's, and every send names an equal one of the
     * application's.
     */
    @Test
    void sendsOverAConnectionThePeerOpenedAllocateNothingPerMessage() throws Exception {
        assertSteadyStateAllocation(64, true);
    }

    /**
     * Every message congests the receiver's port and the read clears it again: two congestion maps for each message,
     * as 1 MiB messages do with default buffers (each map once cost a view, a task and two iterators).
     */
    @Test
    void messagesThatCongestTheReceiverEachTimeAllocateNothingPerMessage() throws Exception {
        assertSteadyStateAllocation(6000, false, 8192, MESSAGES / 10);
    }

    private void assertSteadyStateAllocation(int size) throws Exception {
        assertSteadyStateAllocation(size, false);
    }

    private void assertSteadyStateAllocation(int size, boolean peerOpens) throws Exception {
        assertSteadyStateAllocation(size, peerOpens, 1 << 20, MESSAGES);
    }

    private void assertSteadyStateAllocation(int size, boolean peerOpens, int rcvbuf, int messages) throws Exception {
        try (RdsStack a = newStack("alloc-a", addressA(), 0);
             RdsStack b = newStack("alloc-b", addressB(), 1);
             RdsSocket tx = a.openSocket();
             RdsSocket rx = b.openSocket()) {
            tx.setOption(RdsSocketOptions.SO_RDS_TRANSPORT, transport());
            rx.setOption(RdsSocketOptions.SO_RDS_TRANSPORT, transport());
            tx.bind(new InetSocketAddress(addressA(), 0));
            rx.bind(new InetSocketAddress(addressB(), 0));
            // Pools grow to the most a socket ever holds: messages in flight (bounded by the send budget) and
            // arrivals queued (bounded, through congestion, by the receive budget). Default send buffer and a 1 MiB
            // receive buffer keep both peaks small enough that the warm-up reaches them whatever the scheduler
            // does; with 8 MiB, a reader descheduled longer than in the warm-up grew the pool in the measured phase.
            rx.setOption(RdsSocketOptions.SO_RCVBUF, rcvbuf);
            rx.setOption(RdsSocketOptions.SO_RCVTIMEO, Duration.ofSeconds(30));
            InetSocketAddress to = rx.localAddress();
            if (peerOpens) {
                tx.setOption(RdsSocketOptions.SO_RCVTIMEO, Duration.ofSeconds(30));
                rx.send(ByteBuffer.allocate(8), tx.localAddress());
                tx.receive(ByteBuffer.allocate(8), new RdsMessageInfo(), 0);
                // An address equal to the peer's but not the object the connection holds, as an application has.
                to = new InetSocketAddress(InetAddress.getByAddress(to.getAddress().getAddress()), to.getPort());
            }

            // Warm-up: pools fill, code compiles. Halfway through, the reader stops until the sender is held back
            // (by congestion or its send budget), as a reader the scheduler deschedules does: the pools then grow to
            // what a stalled reader makes them hold before anything is measured, not during it.
            run(tx, rx, to, size, 2 * messages, true);
            long mapsBefore = b.counters().get("cong_update_queued");
            List<String> phases = new ArrayList<>();
            double perMessage = Double.MAX_VALUE;
            for (int phase = 1; phase <= MAX_PHASES && perMessage > BOUND_PER_MESSAGE; phase++) {
                Map<Long, Long> before = allocatedPerThread();
                run(tx, rx, to, size, messages, false);
                Map<Long, Long> after = allocatedPerThread();
                long total = 0;
                Map<String, Long> byThread = new TreeMap<>();
                for (Map.Entry<Long, Long> e : after.entrySet()) {
                    Long was = before.get(e.getKey());
                    long grew = e.getValue() - (was == null ? 0 : was);  // a thread born during the phase counts whole
                    total += grew;
                    if (grew >= 1024) {
                        byThread.merge(threadName(e.getKey()), grew, Long::sum);
                    }
                }
                perMessage = (double) total / messages;
                phases.add(String.format("phase %d: %d bytes, %.1f per message%s", phase, total, perMessage,
                        perMessage > BOUND_PER_MESSAGE ? " (over the bound; by thread: " + byThread + ")" : ""));
            }
            long maps = b.counters().get("cong_update_queued") - mapsBefore;
            int measured = phases.size();
            System.out.printf("%s, %d-byte messages%s: %.1f bytes allocated per message over %d messages (%s), %d"
                    + " congestion maps queued by the receiver%n", transport(), size,
                    peerOpens ? " over a connection the peer opened" : "", perMessage, messages,
                    String.join("; ", phases), maps);
            if (rcvbuf < 2 * size) {
                assertTrue(maps >= measured * (long) messages / 2, "most messages congest the receiver's port: "
                        + maps + " maps for " + measured * messages + " messages");
            }
            assertTrue(perMessage <= BOUND_PER_MESSAGE, transport() + ": more than " + BOUND_PER_MESSAGE
                    + " bytes allocated per " + size + "-byte message in steady state in each of " + MAX_PHASES
                    + " phases: " + String.join("; ", phases));
        }
    }

    /**
     * Sends {@code n} messages and receives them on another thread, checking each one's length and number. With
     * {@code stall}, the receiver stops halfway until the sending thread waits (held back by congestion or its send
     * budget) or has sent everything.
     */
    private static void run(RdsSocket tx, RdsSocket rx, InetSocketAddress to, int size, int n, boolean stall)
            throws Exception {
        Thread sender = Thread.currentThread();
        AtomicInteger sent = new AtomicInteger();
        CompletableFuture<Void> receiver = CompletableFuture.runAsync(() -> {
            ByteBuffer dst = ByteBuffer.allocateDirect(size);
            RdsMessageInfo info = new RdsMessageInfo();
            try {
                for (int i = 0; i < n; i++) {
                    if (stall && i == n / 2) {
                        awaitHeldBack(sender, sent, n);
                    }
                    dst.clear();
                    int got = rx.receive(dst, info, 0);
                    if (got != size || dst.getInt(0) != i) {
                        throw new AssertionError("message " + i + ": " + got + " bytes, number " + dst.getInt(0));
                    }
                }
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        }, AllocationContract::receiverThread);
        ByteBuffer src = ByteBuffer.allocateDirect(size);
        for (int i = 0; i < n; i++) {
            src.clear();
            src.putInt(0, i);
            tx.send(src, to);
            sent.lazySet(i + 1);
        }
        receiver.get(60, TimeUnit.SECONDS);
        assertEquals(true, tx.awaitSent(Duration.ofSeconds(30)), "every message released");
    }

    /**
     * Waits until the sending thread waits inside a send (its socket's flow control holds it back) or has sent all
     * {@code n}; at most 30 s. Only how deep the warm-up's stall goes depends on this, no verdict.
     */
    private static void awaitHeldBack(Thread sender, AtomicInteger sent, int n) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (sent.get() < n && System.nanoTime() - deadline < 0) {
            Thread.State state = sender.getState();
            if (state == Thread.State.WAITING || state == Thread.State.TIMED_WAITING) {
                return;
            }
            Thread.yield();
        }
    }

    /** One receiver thread kept for the whole test, so its allocation is counted in both snapshots. */
    private static final java.util.concurrent.ExecutorService RECEIVER =
            java.util.concurrent.Executors.newSingleThreadExecutor(r -> {
                Thread t = new Thread(r, "allocation-contract-receiver");
                t.setDaemon(true);
                return t;
            });

    private static void receiverThread(Runnable r) {
        RECEIVER.execute(r);
    }

    private static String threadName(long id) {
        ThreadInfo t = ManagementFactory.getThreadMXBean().getThreadInfo(id);
        return t == null ? "thread " + id + " (ended)" : t.getThreadName();
    }

    private static Map<Long, Long> allocatedPerThread() {
        com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long[] ids = mx.getAllThreadIds();
        long[] bytes = mx.getThreadAllocatedBytes(ids);
        Map<Long, Long> m = new HashMap<>();
        for (int i = 0; i < ids.length; i++) {
            if (bytes[i] >= 0) {
                m.put(ids[i], bytes[i]);
            }
        }
        return m;
    }
}
