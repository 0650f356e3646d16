package org.rds4j.transport.tcp.chaos;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.rds4j.RdsSocket;
import org.rds4j.RdsSocketOptions;
import org.rds4j.RdsStack;
import org.rds4j.RdsStackConfig;

/**
 * A receiving host that crashes and comes back: 100,000 messages from this JVM (host A, 127.0.0.1) to a
 * {@link RestartReceiverMain} process (host B, 127.0.0.2), which the test kills ({@code destroyForcibly}, like a power
 * cut) at a seeded point midway and starts again on the same address and ports, while the sender keeps sending.
 *
 * <p>What RDS promises here, as the kernel does: reliability is between hosts, so what a dead host had not handed to
 * its application dies with it, and a new incarnation is a new host. Asserted:
 * <ul>
 *   <li>the first incarnation received a prefix of the stream, 0..m1, complete, in order, once each;</li>
 *   <li>the second received a suffix, s2..N-1, complete, in order, once each, to the very last message;</li>
 *   <li>messages both received ({@code s2 <= m1}) were all unacknowledged at the kill: inside the sender's
 *       unreleased window, as {@code RDS_SEND_QUEUED} measured it at the last send before the kill;</li>
 *   <li>messages neither received ({@code s2 > m1 + 1}) are at most what the dead host could have held unread
 *       (its receive budget, plus what was in flight when it said "congested") plus what the sender had not yet seen
 *       acknowledged: {@code rcvBudget + 2 * (sndBudget + maxMessage)} bytes;</li>
 *   <li>no send ever blocked longer than {@link #SEND_BOUND} (the peer was down for a JVM start).</li>
 * </ul>
 * The counts (overlap, lost, flushed, retransmitted) are printed for docs/reliability.md.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class PeerRestartTest {
    private static final int MESSAGES = 100_000;
    /**
     * Sizes 8..8192, log-uniform above 8 (mean about 0.9 KB): at least 8 bytes so that every message names its k in
     * full, since the restarted receiver joins the stream at a point it cannot know.
     */
    private static final int MIN_SIZE = 8;
    private static final int MAX_SIZE = 8192;
    private static final int SEND_PORT = 4101;
    private static final int RECV_PORT = 4100;
    private static final Duration SEND_BOUND = Duration.ofSeconds(20);
    private static final Duration WAIT = Duration.ofSeconds(60);

    private final List<Incarnation> incarnations = new ArrayList<>();
    private RdsStack a;
    private Thread sender;

    @AfterEach
    void tearDown() throws InterruptedException {
        for (Incarnation inc : incarnations) {
            inc.destroy();
        }
        if (a != null) {
            a.close();
        }
        if (sender != null) {
            sender.join(5_000);
        }
        Chaos.assertNoLeaks();
    }

    @Test
    void aKilledAndRestartedReceiverGetsAPrefixThenASuffixAndTheSenderNeverHangs() throws Exception {
        long seed = Chaos.seed("PeerRestartTest");
        SplittableRandom random = new SplittableRandom(seed);
        int killAt = MESSAGES / 4 + random.nextInt(MESSAGES / 4);       // 25%..50% of the stream
        int port = Chaos.freePort(-1);
        InetSocketAddress source = Chaos.at(Chaos.A, SEND_PORT);
        InetSocketAddress dest = Chaos.at(Chaos.B, RECV_PORT);

        Incarnation first = start(1, seed, port);
        a = RdsStack.create(RdsStackConfig.builder().name("A").address(Chaos.A).tcpPort(port).defaultTransport("tcp")
                .build());
        RdsSocket out = a.openSocket();
        out.setOption(RdsSocketOptions.SO_SNDTIMEO, SEND_BOUND);     // a send blocked longer fails: never hangs
        out.bind(source);
        int sndBudget = out.getOption(RdsSocketOptions.SO_SNDBUF) / 2;

        // The sender records, for each message, when its send returned and what the socket then held unreleased.
        int[] sizes = new int[MESSAGES];
        long[] sendDone = new long[MESSAGES];
        int[] queuedAfter = new int[MESSAGES];
        AtomicLong sentCount = new AtomicLong();
        AtomicLong maxSendNanos = new AtomicLong();
        AtomicReference<String> sendError = new AtomicReference<>();
        sender = new Thread(() -> {
            byte[] body = new byte[MAX_SIZE];
            int k = 0;
            try {
                for (; k < MESSAGES; k++) {
                    long hash = Chaos.messageHash(seed, 0, k);
                    int size = Chaos.size(hash, MIN_SIZE, MAX_SIZE);
                    sizes[k] = size;
                    Chaos.fillBody(body, size, hash, 0, k);
                    long t0 = System.nanoTime();
                    out.send(ByteBuffer.wrap(body, 0, size), dest);
                    long t1 = System.nanoTime();
                    maxSendNanos.accumulateAndGet(t1 - t0, Math::max);
                    queuedAfter[k] = out.getOption(RdsSocketOptions.RDS_SEND_QUEUED);
                    sendDone[k] = t1;
                    sentCount.incrementAndGet();
                }
            } catch (Throwable t) {
                sendError.set("send of k=" + k + " failed: " + t);
            }
        }, "restart-sender");
        sender.setDaemon(true);
        sender.start();

        // Kill the first incarnation once it has received killAt messages; start the second at once.
        if (!first.awaitCount(killAt, WAIT)) {
            fail("seed " + seed + ": before any kill, the first incarnation got only " + first.count() + " of "
                    + killAt + " messages in " + WAIT.toSeconds() + " s; sent " + sentCount.get() + "; send error: "
                    + sendError.get() + "; RDS_SEND_QUEUED=" + out.getOption(RdsSocketOptions.RDS_SEND_QUEUED)
                    + "; A's counters " + a.counters() + "; the sender is at:" + Chaos.stackOf(sender));
        }
        long killNanos = System.nanoTime();
        // SIGKILL through the ProcessHandle: Process.destroyForcibly() would also close our end of its output pipe,
        // losing the lines it printed just before dying; this way they are read to the end.
        first.process.toHandle().destroyForcibly();
        assertTrue(first.process.waitFor(10, TimeUnit.SECONDS), "the first incarnation did not die");
        first.reader.join(5_000);                  // its last lines are read: its record is final
        long sentAtKill = sentCount.get();
        Incarnation second = start(2, seed, port);
        long restartedNanos = second.readyNanos;

        // Let the sender finish, everything be acknowledged, and the second incarnation get the last message.
        // (A failed sender fails by itself after SEND_BOUND; then there is nothing left worth waiting long for.)
        sender.join(WAIT.toMillis());
        boolean senderOk = !sender.isAlive() && sendError.get() == null;
        boolean senderDone = !sender.isAlive();
        boolean acknowledged = out.awaitSent(senderOk ? Duration.ofSeconds(30) : Duration.ofSeconds(2));
        boolean gotLast = second.awaitLast(MESSAGES - 1, senderOk ? WAIT : Duration.ofSeconds(2));
        long sentTotal = sentCount.get();

        // --- analysis
        List<Long> r1 = first.received();
        List<Long> r2 = second.received();
        List<String> failures = new ArrayList<>();
        String order1 = contiguous(r1, 0);
        if (order1 != null) {
            failures.add("first incarnation: " + order1);
        }
        long m1 = r1.size() - 1;                  // the last message the first incarnation had
        long s2 = r2.isEmpty() ? -1 : r2.get(0);  // the first the second incarnation had
        String order2 = r2.isEmpty() ? "received nothing" : contiguous(r2, s2);
        if (order2 != null) {
            failures.add("second incarnation: " + order2);
        }
        if (!r2.isEmpty() && r2.get(r2.size() - 1) != MESSAGES - 1) {
            failures.add("second incarnation's last message is k=" + r2.get(r2.size() - 1) + ", not " + (MESSAGES - 1));
        }
        for (Incarnation inc : incarnations) {
            if (!inc.problems.isEmpty()) {
                failures.add("incarnation " + inc.number + " reported " + inc.problems);
            }
        }
        // The sender's unreleased window at its last send before the kill: [windowStart, lastBeforeKill + 1]
        // (the +1: a send under way at the kill may have queued its message already).
        int lastBeforeKill = -1;
        for (int k = 0; k < MESSAGES && sendDone[k] != 0 && sendDone[k] <= killNanos; k++) {
            lastBeforeKill = k;
        }
        int windowStart = lastBeforeKill + 1;
        if (lastBeforeKill >= 0) {
            long held = queuedAfter[lastBeforeKill];
            long sum = 0;
            while (windowStart > 0 && sum + sizes[windowStart - 1] <= held) {
                sum += sizes[--windowStart];
            }
        }
        long overlap = s2 >= 0 && s2 <= m1 ? m1 - s2 + 1 : 0;
        long lost = s2 > m1 + 1 ? s2 - m1 - 1 : 0;
        long lostBytes = 0;
        for (long k = m1 + 1; k < s2; k++) {
            lostBytes += sizes[(int) k];
        }
        int rcvBudget = second.rcvbuf / 2;
        long lostBound = rcvBudget + 2L * (sndBudget + MAX_SIZE);
        if (overlap > 0 && s2 < windowStart) {
            failures.add("the second incarnation received again k=" + s2 + ".." + m1 + ", but only k>=" + windowStart
                    + " were unacknowledged at the kill");
        }
        if (lostBytes > lostBound) {
            failures.add(lost + " messages (" + lostBytes + " bytes) were received by neither incarnation, more than "
                    + "a dead host can have held unread plus the unacknowledged window: " + lostBound + " bytes");
        }
        if (maxSendNanos.get() > SEND_BOUND.toNanos() || sendError.get() != null) {
            failures.add("a send blocked too long: slowest " + maxSendNanos.get() / 1_000_000 + " ms; "
                    + sendError.get());
        }
        if (!senderDone || sentTotal != MESSAGES) {
            failures.add("the sender sent " + sentTotal + " of " + MESSAGES + (sender.isAlive() ? "; it is at:"
                    + Chaos.stackOf(sender) : ""));
        }
        if (!acknowledged) {
            failures.add("messages were still unacknowledged after the last send (RDS_SEND_QUEUED="
                    + out.getOption(RdsSocketOptions.RDS_SEND_QUEUED) + " of budget " + sndBudget + ")");
        }
        if (!gotLast) {
            failures.add("the second incarnation never received the last message");
        }
        long sentWhileDown = 0;
        for (int k = 0; k < MESSAGES; k++) {
            if (sendDone[k] > killNanos && sendDone[k] < restartedNanos) {
                sentWhileDown++;
            }
        }
        Map<String, Long> ca = a.counters();
        String summary = String.format("PeerRestartTest seed=%d: killed the receiver after it printed %d (target %d),"
                + " sender had sent %d; first incarnation got k=0..%d (%d msgs); second got k=%d..%d (%d msgs); "
                + "overlap=%d (received by both), lost=%d (%d bytes; bound %d), unacknowledged window at kill=k%d..%d "
                + "(%d msgs, %d bytes); down for %d ms, %d sends completed while down; slowest send %d ms; A: %s",
                seed, r1.size(), killAt, sentAtKill, m1, r1.size(), s2, r2.isEmpty() ? -1 : r2.get(r2.size() - 1),
                r2.size(), overlap, lost, lostBytes, lostBound, windowStart, lastBeforeKill,
                lastBeforeKill - windowStart + 1, lastBeforeKill >= 0 ? queuedAfter[lastBeforeKill] : 0,
                (restartedNanos - killNanos) / 1_000_000, sentWhileDown, maxSendNanos.get() / 1_000_000,
                Chaos.counters(ca));
        System.out.println(summary);
        if (!failures.isEmpty()) {
            fail("seed " + seed + " (replay with -D" + Chaos.SEED_PROPERTY + "=" + seed + "):\n  "
                    + String.join("\n  ", failures) + "\n" + summary);
        }
    }

    /** Null if {@code ks} is exactly {@code from, from+1, ...}; else what is wrong first. */
    private static String contiguous(List<Long> ks, long from) {
        for (int i = 0; i < ks.size(); i++) {
            if (ks.get(i) != from + i) {
                long prev = i == 0 ? -1 : ks.get(i - 1);
                return "message #" + i + " is k=" + ks.get(i) + " after k=" + prev + ", expected k=" + (from + i)
                        + (ks.get(i) <= prev ? " (a duplicate or reordering)" : " (a gap)");
            }
        }
        return null;
    }

    /** Starts a receiver process and waits for its READY. */
    private Incarnation start(int number, long seed, int port) throws Exception {
        String java = System.getProperty("java.home") + File.separator + "bin" + File.separator + "java";
        Process p = new ProcessBuilder(java, "-Xmx256m", "-cp", System.getProperty("java.class.path"),
                "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", RestartReceiverMain.class.getName(),
                Chaos.B.getHostAddress(), String.valueOf(port), String.valueOf(RECV_PORT), String.valueOf(seed),
                String.valueOf(MIN_SIZE), String.valueOf(MAX_SIZE), String.valueOf(MESSAGES), Chaos.A.getHostAddress(),
                String.valueOf(SEND_PORT))
                .redirectErrorStream(true).start();
        Incarnation inc = new Incarnation(number, p);
        incarnations.add(inc);
        if (!inc.ready.await(60, TimeUnit.SECONDS)) {
            throw new AssertionError("incarnation " + number + " did not print READY within 60 s; output: "
                    + inc.problems);
        }
        return inc;
    }

    /** One run of the receiver process and what it printed. */
    private static final class Incarnation {
        final int number;
        final Process process;
        final Thread reader;
        final CountDownLatch ready = new CountDownLatch(1);
        final List<String> problems = new ArrayList<>();
        private final List<Long> received = new ArrayList<>();
        volatile long readyNanos;
        volatile int rcvbuf;

        Incarnation(int number, Process process) {
            this.number = number;
            this.process = process;
            this.reader = new Thread(this::read, "restart-peer-" + number + "-out");
            reader.setDaemon(true);
            reader.start();
        }

        /** Reads the process's output to its end (its death), so that it can never block on a full pipe. */
        private void read() {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getInputStream(),
                    StandardCharsets.UTF_8))) {
                String line;
                while ((line = in.readLine()) != null) {
                    if (line.startsWith("R ")) {
                        synchronized (this) {
                            received.add(Long.parseLong(line.substring(2).trim()));
                            notifyAll();
                        }
                    } else if (line.startsWith("READY")) {
                        int at = line.indexOf("SO_RCVBUF=");
                        rcvbuf = at < 0 ? 0 : Integer.parseInt(line.substring(at + 10).trim());
                        readyNanos = System.nanoTime();
                        System.out.println("[receiver " + number + "] " + line);
                        ready.countDown();
                    } else if (line.startsWith("PROGRESS")) {
                        System.out.println("[receiver " + number + "] " + line);
                    } else {
                        System.out.println("[receiver " + number + "] " + line);
                        synchronized (this) {
                            if (line.startsWith("BAD") || line.startsWith("SRC") || line.contains("Exception")) {
                                problems.add(line);
                            }
                        }
                    }
                }
            } catch (IOException | NumberFormatException e) {
                synchronized (this) {
                    problems.add("output unreadable: " + e);
                }
            }
        }

        synchronized int count() {
            return received.size();
        }

        synchronized List<Long> received() {
            return new ArrayList<>(received);
        }

        synchronized boolean awaitCount(int n, Duration timeout) throws InterruptedException {
            long deadline = System.nanoTime() + timeout.toNanos();
            while (received.size() < n) {
                long left = deadline - System.nanoTime();
                if (left <= 0 || !process.isAlive()) {
                    return false;
                }
                TimeUnit.NANOSECONDS.timedWait(this, Math.min(left, TimeUnit.MILLISECONDS.toNanos(200)));
            }
            return true;
        }

        synchronized boolean awaitLast(long k, Duration timeout) throws InterruptedException {
            long deadline = System.nanoTime() + timeout.toNanos();
            while (received.isEmpty() || received.get(received.size() - 1) != k) {
                long left = deadline - System.nanoTime();
                if (left <= 0 || !process.isAlive()) {
                    return false;
                }
                TimeUnit.NANOSECONDS.timedWait(this, Math.min(left, TimeUnit.MILLISECONDS.toNanos(200)));
            }
            return true;
        }

        /** Ends the process: stdin closed (it exits by itself), then forcibly; bounded waits. */
        void destroy() throws InterruptedException {
            if (process.isAlive()) {
                try {
                    process.getOutputStream().close();
                } catch (IOException ignored) {
                    // it is dying anyway
                }
                if (!process.waitFor(5, TimeUnit.SECONDS)) {
                    process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                }
            }
            reader.join(5_000);
        }
    }
}
