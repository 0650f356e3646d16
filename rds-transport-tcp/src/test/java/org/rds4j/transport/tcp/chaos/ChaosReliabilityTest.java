package org.rds4j.transport.tcp.chaos;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.rds4j.RdsDatagram;
import org.rds4j.RdsSocket;
import org.rds4j.RdsSocketOptions;
import org.rds4j.RdsStack;
import org.rds4j.RdsStackConfig;

/**
 * RDS's central promise under fire: many messages from 8 sockets on host A (127.0.0.1) to 8 sockets on host B
 * (127.0.0.2), over the connection's 8 paths, through a {@link ChaosProxy} that resets one of the paths' TCP
 * connections every 50 ms to 1 s at a random byte of either direction, and all of them every 3 s. Every message must arrive exactly once, in its sender's order, byte for byte; and no sender may ever
 * hold more than its send budget (half of {@code SO_SNDBUF}) plus one message.
 *
 * <p>Sizes: 0 to 65536 bytes, log-uniform in {@code size + 1} ({@link Chaos#logUniformSize}): each power-of-two band
 * gets the same number of messages, so about a fifth are under 8 bytes and a sixteenth are 32 KiB or more; mean
 * about 5.9 KB. Each message's size and bytes are a function of (seed, sender, k), so the receiver checks all of them.
 *
 * <p>The message count is {@code -Drds4j.chaos.messages} (default {@link #DEFAULT_MESSAGES}); see the report for how
 * long a run takes.
 */
@Timeout(value = 290, unit = TimeUnit.SECONDS)
class ChaosReliabilityTest {
    static final String MESSAGES_PROPERTY = "rds4j.chaos.messages";
    static final long DEFAULT_MESSAGES = 1_000_000;
    private static final int STREAMS = 8;
    private static final int MAX_SIZE = 65_536;
    private static final int SEND_PORT = 5000;
    private static final int RECV_PORT = 6000;
    /** SO_SNDBUF as set: the socket's buffer is twice this and its budget this much (Linux's arithmetic). */
    private static final int SNDBUF = 256 * 1024;
    private static final int RCVBUF = 4 * 1024 * 1024;
    /** A send blocked this long fails (ETIMEDOUT) instead of hanging the test. */
    private static final Duration SEND_TIMEOUT = Duration.ofSeconds(30);
    /** The whole sending phase must end by then, or the test fails (the class timeout is a last resort). */
    private static final Duration SENDING_LIMIT = Duration.ofSeconds(120);
    /** Sending is given up on when no sender completed a send for this long (the class must end in 5 minutes). */
    private static final Duration STUCK_LIMIT = Duration.ofSeconds(30);
    /** After sending, receivers that make no progress for this long are given up on. */
    private static final Duration QUIET_LIMIT = Duration.ofSeconds(10);

    private RdsStack a;
    private RdsStack b;
    private ChaosProxy proxy;
    private final List<Thread> threads = new ArrayList<>();
    private ScheduledExecutorService monitor;

    @AfterEach
    void tearDown() {
        if (monitor != null) {
            monitor.shutdownNow();
        }
        if (proxy != null) {
            proxy.close();
        }
        if (a != null) {
            a.close();          // closes sockets too, which wakes any thread still blocked in send or receive
        }
        if (b != null) {
            b.close();
        }
        for (Thread t : threads) {
            try {
                t.join(5_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        Chaos.assertNoLeaks();
    }

    @Test
    void everyMessageArrivesOnceInOrderAndIntactThroughRandomResets() throws Exception {
        long seed = Chaos.seed("ChaosReliabilityTest");
        long perStream = Math.max(1, Chaos.longProperty(MESSAGES_PROPERTY, DEFAULT_MESSAGES) / STREAMS);
        long total = perStream * STREAMS;
        int port = Chaos.freePort(-1);
        int proxyPort = Chaos.freePort(port);
        a = RdsStack.create(RdsStackConfig.builder().name("A").address(Chaos.A).tcpPort(port).defaultTransport("tcp")
                .property("tcp.peerPort", String.valueOf(proxyPort)).paths(8).build());
        b = RdsStack.create(RdsStackConfig.builder().name("B").address(Chaos.B).tcpPort(port).defaultTransport("tcp")
                .paths(8).build());
        proxy = new ChaosProxy(Chaos.at(Chaos.B, proxyPort), Chaos.at(Chaos.B, port), Chaos.A, seed);
        System.out.printf("[ChaosReliabilityTest] %d messages (%d per sender x %d), sizes 0..%d log-uniform, "
                + "A=127.0.0.1:%d -> proxy 127.0.0.2:%d -> B=127.0.0.2:%d%n", total, perStream, STREAMS, MAX_SIZE,
                port, proxyPort, port);

        RdsSocket[] senders = new RdsSocket[STREAMS];
        RdsSocket[] receivers = new RdsSocket[STREAMS];
        StreamChecker[] checkers = new StreamChecker[STREAMS];
        for (int i = 0; i < STREAMS; i++) {
            senders[i] = a.openSocket();
            senders[i].setOption(RdsSocketOptions.SO_SNDBUF, SNDBUF);
            senders[i].setOption(RdsSocketOptions.SO_SNDTIMEO, SEND_TIMEOUT);
            senders[i].bind(Chaos.at(Chaos.A, SEND_PORT + i));
            receivers[i] = b.openSocket();
            receivers[i].setOption(RdsSocketOptions.SO_RCVBUF, RCVBUF);
            receivers[i].bind(Chaos.at(Chaos.B, RECV_PORT + i));
            checkers[i] = new StreamChecker(seed, i, MAX_SIZE, perStream);
        }
        int budget = senders[0].getOption(RdsSocketOptions.SO_SNDBUF) / 2;
        long queuedBound = (long) budget + MAX_SIZE;

        // Receivers: check each message as it comes; run until told to stop and then quiet for 200 ms, so that a
        // late duplicate is still seen.
        AtomicLong receivedTotal = new AtomicLong();
        CountDownLatch complete = new CountDownLatch(STREAMS);
        AtomicReference<Throwable> receiveError = new AtomicReference<>();
        AtomicBoolean stopReceiving = new AtomicBoolean();
        for (int i = 0; i < STREAMS; i++) {
            int stream = i;
            InetSocketAddress source = Chaos.at(Chaos.A, SEND_PORT + i);
            threads.add(start("receiver-" + i, () -> {
                StreamChecker c = checkers[stream];
                boolean done = false;
                try {
                    while (true) {
                        Optional<RdsDatagram> d = receivers[stream].receive(Duration.ofMillis(200));
                        if (d.isEmpty()) {
                            if (stopReceiving.get()) {
                                return;
                            }
                            continue;
                        }
                        if (!source.equals(d.get().source())) {
                            throw new AssertionError("receiver " + stream + " got a message from " + d.get().source());
                        }
                        c.accept(d.get().payload());
                        receivedTotal.incrementAndGet();
                        if (!done && c.expected() >= perStream && c.hasFirst(perStream)) {
                            done = true;
                            complete.countDown();
                        }
                    }
                } catch (Throwable t) {
                    receiveError.compareAndSet(null, t);
                }
            }));
        }

        // Monitor: RDS_SEND_QUEUED of every sender, every 2 ms.
        AtomicLongArray maxQueued = new AtomicLongArray(STREAMS);
        AtomicReference<String> queuedViolation = new AtomicReference<>();
        AtomicLong samples = new AtomicLong();
        monitor = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "send-queued-monitor");
            t.setDaemon(true);
            return t;
        });
        monitor.scheduleAtFixedRate(() -> {
            for (int i = 0; i < STREAMS; i++) {
                try {
                    int q = senders[i].getOption(RdsSocketOptions.RDS_SEND_QUEUED);
                    maxQueued.accumulateAndGet(i, q, Math::max);
                    if (q > queuedBound) {
                        queuedViolation.compareAndSet(null, "sender " + i + " held " + q + " bytes, more than the "
                                + "budget " + budget + " + one largest message " + MAX_SIZE + " = " + queuedBound);
                    }
                } catch (IOException closed) {
                    // the socket closed at the end of the test
                }
            }
            samples.incrementAndGet();
        }, 0, 2, TimeUnit.MILLISECONDS);

        proxy.startResets(Duration.ofMillis(50), Duration.ofSeconds(1));
        // With 8 paths the resets above hit single lanes; now and then every lane goes at once too.
        monitor.scheduleAtFixedRate(proxy::resetAllNow, 3, 3, TimeUnit.SECONDS);

        // Senders: message k of stream i, as fast as the budget allows.
        long start = System.nanoTime();
        AtomicLongArray sent = new AtomicLongArray(STREAMS);
        AtomicLongArray maxSendNanos = new AtomicLongArray(STREAMS);
        AtomicLong bytesSent = new AtomicLong();
        AtomicReference<String> sendError = new AtomicReference<>();
        AtomicBoolean stopSending = new AtomicBoolean();
        List<Thread> senderThreads = new ArrayList<>();
        for (int i = 0; i < STREAMS; i++) {
            int stream = i;
            InetSocketAddress dest = Chaos.at(Chaos.B, RECV_PORT + i);
            senderThreads.add(start("sender-" + i, () -> {
                byte[] body = new byte[MAX_SIZE];
                ByteBuffer view = ByteBuffer.wrap(body);
                long k = 0;
                try {
                    for (; k < perStream && !stopSending.get(); k++) {
                        long hash = Chaos.messageHash(seed, stream, k);
                        int size = Chaos.logUniformSize(hash, MAX_SIZE);
                        Chaos.fillBody(body, size, hash, stream, k);
                        view.limit(size).position(0);
                        long t0 = System.nanoTime();
                        senders[stream].send(view, dest);
                        maxSendNanos.accumulateAndGet(stream, System.nanoTime() - t0, Math::max);
                        sent.incrementAndGet(stream);
                        bytesSent.addAndGet(size);
                    }
                } catch (Throwable t) {
                    sendError.compareAndSet(null, "sender " + stream + " failed at k=" + k + ": " + t);
                    stopSending.set(true);          // the run has failed: do not wait for the others
                }
            }));
        }
        threads.addAll(senderThreads);
        // Wait for the senders, giving up at SENDING_LIMIT or after STUCK_LIMIT without a single send completing.
        long sendingDeadline = start + SENDING_LIMIT.toNanos();
        long lastSent = -1;
        long lastSendProgress = System.nanoTime();
        String stuck = null;
        for (Thread t : senderThreads) {
            while (t.isAlive()) {
                t.join(500);
                long now = System.nanoTime();
                long sentNow = 0;
                for (int i = 0; i < STREAMS; i++) {
                    sentNow += sent.get(i);
                }
                if (sentNow != lastSent) {
                    lastSent = sentNow;
                    lastSendProgress = now;
                }
                if (now - sendingDeadline > 0) {
                    stuck = "senders did not finish within " + SENDING_LIMIT;
                } else if (now - lastSendProgress > STUCK_LIMIT.toNanos()) {
                    stuck = "no send completed for " + STUCK_LIMIT.toSeconds() + " s";
                }
                if (stuck != null) {
                    stopSending.set(true);
                    break;
                }
            }
            if (stuck != null) {
                break;
            }
        }
        // A send blocked on the budget or on a congested port ends at SO_SNDTIMEO (each wait on its own); the join
        // is bounded here as well, once for all senders.
        long joinDeadline = System.nanoTime() + (stuck == null ? 1_000 : SEND_TIMEOUT.toMillis() + 5_000) * 1_000_000L;
        for (Thread t : senderThreads) {
            t.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(joinDeadline - System.nanoTime())));
        }
        long sendNanos = System.nanoTime() - start;
        boolean sendersDone = stuck == null && senderThreads.stream().noneMatch(Thread::isAlive);

        // Sending is over: stop the faults, let the last messages be acknowledged, and wait for the receivers.
        long resetsDuringSend = proxy.resetsDone();
        proxy.stopFaults();
        long settleStart = System.nanoTime();
        boolean allAcknowledged = true;
        long ackDeadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(sendersDone ? 20 : 2);
        for (RdsSocket s : senders) {
            allAcknowledged &= s.awaitSent(Duration.ofNanos(Math.max(1, ackDeadline - System.nanoTime())));
        }
        long settleNanos = System.nanoTime() - settleStart;
        long lastProgress = receivedTotal.get();
        long lastProgressAt = System.nanoTime();
        while (!complete.await(500, TimeUnit.MILLISECONDS)) {
            long now = receivedTotal.get();
            if (now != lastProgress) {
                lastProgress = now;
                lastProgressAt = System.nanoTime();
            } else if (System.nanoTime() - lastProgressAt > QUIET_LIMIT.toNanos()) {
                break;
            }
        }
        long totalNanos = System.nanoTime() - start;
        stopReceiving.set(true);
        for (Thread t : threads) {
            if (t.getName().startsWith("receiver-")) {
                t.join(5_000);
            }
        }
        monitor.shutdownNow();
        monitor.awaitTermination(5, TimeUnit.SECONDS);

        // Report, then judge.
        long received = 0;
        long distinct = 0;
        long lost = 0;
        long duplicates = 0;
        long outOfOrder = 0;
        long corrupt = 0;
        long unplaceable = 0;
        long holes = 0;
        String firstAnomaly = null;
        long maxQ = 0;
        long maxSend = 0;
        for (int i = 0; i < STREAMS; i++) {
            StreamChecker c = checkers[i];
            received += c.received();
            distinct += c.distinct();
            lost += c.lost(perStream);
            duplicates += c.duplicates();
            outOfOrder += c.outOfOrder();
            corrupt += c.corrupt();
            unplaceable += c.unplaceable();
            holes += c.forwardJumps();
            if (firstAnomaly == null) {
                firstAnomaly = c.firstAnomaly();
            }
            maxQ = Math.max(maxQ, maxQueued.get(i));
            maxSend = Math.max(maxSend, maxSendNanos.get(i));
        }
        Map<String, Long> ca = a.counters();
        Map<String, Long> cb = b.counters();
        long sentTotal = 0;
        for (int i = 0; i < STREAMS; i++) {
            sentTotal += sent.get(i);
        }
        String summary = String.format("ChaosReliabilityTest seed=%d: sent %d msgs / %.1f MB in %.1f s (%.0f MB/s, "
                + "all done %.1f s); received=%d distinct=%d lost=%d duplicates=%d outOfOrder=%d corrupt=%d unplaceable=%d holes=%d;"
                + " resets=%d during sending (%s); A: %s; B: %s; max RDS_SEND_QUEUED=%d (bound %d, %d samples); "
                + "slowest send %.0f ms; awaitSent %s in %.1f s",
                seed, sentTotal, bytesSent.get() / 1e6, sendNanos / 1e9, bytesSent.get() / 1e6 / (sendNanos / 1e9),
                totalNanos / 1e9, received, distinct, lost, duplicates, outOfOrder, corrupt, unplaceable, holes, resetsDuringSend,
                proxy.stats(), Chaos.counters(ca), Chaos.counters(cb), maxQ, queuedBound, samples.get(),
                maxSend / 1e6, allAcknowledged ? "ok" : "TIMED OUT", settleNanos / 1e9);
        System.out.println(summary);

        List<String> failures = new ArrayList<>();
        if (receiveError.get() != null) {
            failures.add("a receiver failed: " + receiveError.get());
        }
        if (sendError.get() != null) {
            failures.add(sendError.get());
        }
        if (!sendersDone) {
            StringBuilder where = new StringBuilder();
            for (Thread t : senderThreads) {
                if (t.isAlive()) {
                    where.append(Chaos.stackOf(t));
                }
            }
            failures.add((stuck != null ? stuck : "senders stopped early") + " (sent " + sentTotal + " of " + total
                    + "); A's counters " + ca + where);
        }
        if (lost != 0 || duplicates != 0 || outOfOrder != 0 || corrupt != 0 || unplaceable != 0
                || received != total) {
            failures.add("delivery was not exactly-once in order: " + lost + " lost, " + duplicates + " duplicated, "
                    + outOfOrder + " out of order, " + corrupt + " corrupt, " + unplaceable + " unplaceable (tiny "
                    + "messages after a loss), " + received + " received of " + total + "; first anomaly: "
                    + firstAnomaly);
        }
        if (queuedViolation.get() != null) {
            failures.add("send budget exceeded: " + queuedViolation.get());
        }
        if (!allAcknowledged) {
            failures.add("some sender's messages were still held 20 s after the faults stopped");
        }
        if (resetsDuringSend == 0) {
            failures.add("the proxy reset nothing: the test tested nothing");
        }
        if (!failures.isEmpty()) {
            fail("seed " + seed + " (replay with -D" + Chaos.SEED_PROPERTY + "=" + seed + "):\n  "
                    + String.join("\n  ", failures) + "\n" + summary);
        }
    }

    private static Thread start(String name, Runnable body) {
        Thread t = new Thread(body, name);
        t.setDaemon(true);
        t.start();
        return t;
    }
}
