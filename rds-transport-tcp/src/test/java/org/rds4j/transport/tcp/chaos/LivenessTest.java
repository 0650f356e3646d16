package org.rds4j.transport.tcp.chaos;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.rds4j.RdsDatagram;
import org.rds4j.RdsSocket;
import org.rds4j.RdsSocketOptions;
import org.rds4j.RdsStack;
import org.rds4j.RdsStackConfig;

/**
 * {@link RdsStackConfig#livenessInterval()}: a connection that goes silent without closing (the proxy stops
 * forwarding both ways and keeps both sockets open, as a dead middlebox would) must be declared dead and replaced by
 * a new connection within twice the interval, long before TCP keepalive (about 30 s) would notice; and the messages
 * sent before, during and after must all arrive once, in order.
 *
 * <p>The reconnect backoff ceiling is lowered to 200 ms: both hosts declare the path dead at about the same time,
 * and if host A's first reconnect reaches host B before B has dropped its side, B refuses it and A backs off; with
 * the default 1 s ceiling that backoff alone could take the new connection past the bound this test is about.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class LivenessTest {
    private static final Duration INTERVAL = Duration.ofSeconds(1);
    /** Much longer than the interval: the stalled connection must be given up, not waited out. */
    private static final Duration STALL = INTERVAL.multipliedBy(5);
    private static final int MAX_SIZE = 4096;
    private static final Duration WAIT = Duration.ofSeconds(15);

    private RdsStack a;
    private RdsStack b;
    private ChaosProxy proxy;
    private Thread sender;
    private Thread receiver;
    private final AtomicBoolean stopSending = new AtomicBoolean();
    private final AtomicBoolean stopReceiving = new AtomicBoolean();

    @AfterEach
    void tearDown() throws InterruptedException {
        stopSending.set(true);
        stopReceiving.set(true);
        if (proxy != null) {
            proxy.close();
        }
        if (a != null) {
            a.close();
        }
        if (b != null) {
            b.close();
        }
        for (Thread t : new Thread[] {sender, receiver}) {
            if (t != null) {
                t.join(5_000);
            }
        }
        Chaos.assertNoLeaks();
    }

    @Test
    void aStalledConnectionIsReplacedWithinTwiceTheIntervalAndNothingIsLost() throws Exception {
        long seed = Chaos.seed("LivenessTest");
        int port = Chaos.freePort(-1);
        int proxyPort = Chaos.freePort(port);
        a = RdsStack.create(config("A", port).address(Chaos.A)
                .property("tcp.peerPort", String.valueOf(proxyPort)).build());
        b = RdsStack.create(config("B", port).address(Chaos.B).build());
        proxy = new ChaosProxy(Chaos.at(Chaos.B, proxyPort), Chaos.at(Chaos.B, port), Chaos.A, seed);

        RdsSocket out = a.openSocket();
        out.setOption(RdsSocketOptions.SO_SNDTIMEO, Duration.ofSeconds(20));
        out.bind(Chaos.at(Chaos.A, 5300));
        RdsSocket in = b.openSocket();
        in.bind(Chaos.at(Chaos.B, 6300));
        InetSocketAddress dest = in.localAddress();
        StreamChecker checker = new StreamChecker(seed, 0, MAX_SIZE, Integer.MAX_VALUE);

        // A steady trickle, about 5000 messages a second, so that there is traffic before, during and after.
        AtomicLong sent = new AtomicLong();
        AtomicLong maxSendNanos = new AtomicLong();
        AtomicReference<Throwable> sendError = new AtomicReference<>();
        sender = start("liveness-sender", () -> {
            byte[] body = new byte[MAX_SIZE];
            try {
                for (long k = 0; !stopSending.get(); k++) {
                    long hash = Chaos.messageHash(seed, 0, k);
                    int size = Chaos.logUniformSize(hash, MAX_SIZE);
                    Chaos.fillBody(body, size, hash, 0, k);
                    long t0 = System.nanoTime();
                    out.send(ByteBuffer.wrap(body, 0, size), dest);
                    maxSendNanos.accumulateAndGet(System.nanoTime() - t0, Math::max);
                    sent.incrementAndGet();
                    LockSupport.parkNanos(200_000);      // pacing, not waiting for anything
                }
            } catch (Throwable t) {
                sendError.set(t);
            }
        });
        AtomicReference<Throwable> receiveError = new AtomicReference<>();
        AtomicLong lastArrival = new AtomicLong();
        receiver = start("liveness-receiver", () -> {
            try {
                while (!stopReceiving.get()) {
                    Optional<RdsDatagram> d = in.receive(Duration.ofMillis(100));
                    if (d.isPresent()) {
                        checker.accept(d.get().payload());
                        lastArrival.set(System.nanoTime());
                    }
                }
            } catch (Throwable t) {
                receiveError.set(t);
            }
        });

        // 1. Traffic flows through one proxied connection.
        assertTrue(proxy.await(() -> checker.distinct() >= 2000, WAIT),
                "no traffic before the stall: " + checker + "; " + proxy.stats());
        List<ChaosProxy.LinkInfo> before = proxy.links();
        int lastOldLink = before.stream().mapToInt(ChaosProxy.LinkInfo::id).max().orElse(0);
        Map<String, Long> aBefore = a.counters();
        Map<String, Long> bBefore = b.counters();

        // 2. The connection goes silent both ways, sockets open.
        long sentAtStall = sent.get();
        long stallStart = System.nanoTime();
        proxy.stall(STALL);

        // 3. A new connection must carry bytes both ways (B accepted it and sent its congestion map; A sent its own).
        boolean replaced = proxy.await(() -> newLink(proxy, lastOldLink) != null, WAIT);
        long replacedAt = System.nanoTime();
        ChaosProxy.LinkInfo fresh = newLink(proxy, lastOldLink);
        long newConnectionNanos = fresh == null ? -1
                : Math.max(fresh.firstByteAToB(), fresh.firstByteBToA()) - stallStart;
        // 4. Messages sent after the stall began arrive, on the new connection, while the old one is still stalled.
        long target = sentAtStall + 500;
        boolean resumed = proxy.await(() -> checker.expected() > target, replaced ? WAIT : Duration.ofSeconds(1));
        long resumedNanos = System.nanoTime() - stallStart;

        // 5. Stop sending; everything sent must be acknowledged and delivered exactly once, in order.
        stopSending.set(true);
        sender.join(25_000);
        long total = sent.get();
        Duration settle = resumed ? WAIT : Duration.ofSeconds(2);    // a path that never came back will not now
        boolean acknowledged = out.awaitSent(settle);
        boolean delivered = proxy.await(() -> checker.received() >= total && checker.hasFirst(total), settle);
        stopReceiving.set(true);
        receiver.join(5_000);
        Map<String, Long> ca = a.counters();
        Map<String, Long> cb = b.counters();

        String summary = String.format("LivenessTest seed=%d interval=%d ms stall=%d ms: new connection carried bytes"
                + " both ways %s after the stall began (bound %d ms); %d messages sent after the stall arrived %s; "
                + "sent=%d, %s; slowest send %.0f ms; acknowledged=%s delivered=%s; A: %s; B: %s; %s; links=%s",
                seed, INTERVAL.toMillis(), STALL.toMillis(),
                newConnectionNanos < 0 ? "NEVER (within " + WAIT.toSeconds() + " s)" : (newConnectionNanos / 1_000_000)
                        + " ms",
                2 * INTERVAL.toMillis(), target - sentAtStall,
                resumed ? "by " + resumedNanos / 1_000_000 + " ms" : "NOT within " + WAIT.toSeconds() + " s",
                total, checker, maxSendNanos.get() / 1e6, acknowledged, delivered, Chaos.counters(ca),
                Chaos.counters(cb), proxy.stats(), proxy.links());
        System.out.println(summary);

        StringBuilder failures = new StringBuilder();
        if (sendError.get() != null) {
            failures.append("\n  the sender failed: ").append(sendError.get());
        }
        if (receiveError.get() != null) {
            failures.append("\n  the receiver failed: ").append(receiveError.get());
        }
        if (!replaced) {
            failures.append("\n  no new connection through the proxy within ").append(WAIT.toSeconds())
                    .append(" s of the stall (liveness never declared the path dead)");
        } else if (newConnectionNanos > 2 * INTERVAL.toNanos()) {
            failures.append("\n  the new connection took ").append(newConnectionNanos / 1_000_000)
                    .append(" ms, more than twice the interval");
        }
        if (replaced && !resumed) {
            failures.append("\n  messages sent after the stall did not arrive");
        } else if (resumed && resumedNanos >= STALL.toNanos()) {
            failures.append("\n  traffic resumed only when the stall ended, not on a new connection");
        }
        if (!checker.perfect(total)) {
            failures.append("\n  delivery not exactly-once in order: ").append(checker).append(" of ").append(total)
                    .append(" sent; lost=").append(checker.lost(total)).append("; first anomaly: ")
                    .append(checker.firstAnomaly());
        }
        if (!acknowledged) {
            failures.append("\n  the sender still held messages ").append(WAIT.toSeconds()).append(" s after it "
                    + "stopped");
        }
        if (replaced && ca.getOrDefault("conn_reset", 0L) <= aBefore.getOrDefault("conn_reset", 0L)) {
            failures.append("\n  host A counted no conn_reset for the dead connection");
        }
        if (replaced && cb.getOrDefault("conn_reset", 0L) <= bBefore.getOrDefault("conn_reset", 0L)) {
            failures.append("\n  host B counted no conn_reset for the dead connection");
        }
        if (failures.length() > 0) {
            fail("seed " + seed + ":" + failures + "\n" + summary);
        }
    }

    /** The first connection accepted after {@code lastOld} that carried bytes both ways, or null. */
    private static ChaosProxy.LinkInfo newLink(ChaosProxy proxy, int lastOld) {
        for (ChaosProxy.LinkInfo l : proxy.links()) {
            if (l.id() > lastOld && l.firstByteAToB() != 0 && l.firstByteBToA() != 0) {
                return l;
            }
        }
        return null;
    }

    private static RdsStackConfig.Builder config(String name, int port) {
        return RdsStackConfig.builder().name(name).tcpPort(port).defaultTransport("tcp")
                .livenessInterval(INTERVAL)
                .reconnectDelays(Duration.ofMillis(1), Duration.ofMillis(200));
    }

    private static Thread start(String name, Runnable body) {
        Thread t = new Thread(body, name);
        t.setDaemon(true);
        t.start();
        return t;
    }
}
