package org.rds4j.transport.tcp.chaos;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.function.BooleanSupplier;

/**
 * A TCP proxy that breaks things on purpose: the test's own man in the middle between host A (which connects) and
 * host B (which listens), written with plain blocking sockets and two threads per connection so that it is obviously
 * correct and independent of the Netty code under test.
 *
 * <p>It listens on {@code listenAt}; for each connection it accepts it opens one to {@code target} from
 * {@code onwardFrom} (port 0), so that B sees the connection coming from A's address, and copies bytes both ways.
 * Faults:
 * <ul>
 *   <li><b>reset</b>: at a random byte offset of a random direction (inside headers and payloads alike) it forwards
 *       the bytes up to that offset and then aborts both sockets with {@code SO_LINGER 0}, so both hosts see an RST.
 *       {@link #startResets} does this on a random schedule; {@link #resetSoon()} once, on demand;
 *       {@link #resetAllNow()} at once, wherever the streams are.</li>
 *   <li><b>stall</b> ({@link #stall}): the connections open now stop forwarding both ways for a time, their sockets
 *       kept open (a path that goes silent without closing, as through a dead middlebox).</li>
 *   <li><b>refuse</b> ({@link #refuse}): for a time, new connections are accepted and reset at once.</li>
 * </ul>
 *
 * <p>Every random choice comes from one {@link SplittableRandom} seeded by the caller (the test prints the seed): the
 * same seed gives the same sequence of choices, though the timing of the hosts around them differs from run to run.
 *
 * <p>To classify where a reset cut the stream, each direction follows the RDS framing (48-byte header whose bytes
 * 16..19 are the payload length, then the payload); the proxy never changes a byte.
 */
final class ChaosProxy implements AutoCloseable {
    /** Index of the direction host A to host B (the connecting side to the listening side). */
    static final int A_TO_B = 0;
    /** Index of the direction host B to host A. */
    static final int B_TO_A = 1;

    private static final int CHUNK = 64 * 1024;
    /** How long an armed reset waits for bytes in its direction before it resets the idle connection anyway. */
    private static final long IDLE_RESET_NANOS = TimeUnit.MILLISECONDS.toNanos(250);
    private static final long JOIN_MILLIS = 5_000;
    private static final int RDS_HEADER = 48;

    private final InetSocketAddress target;
    private final InetAddress onwardFrom;
    private final SplittableRandom random;
    private final ServerSocket server;
    private final List<Link> links = new CopyOnWriteArrayList<>();
    private final Set<Thread> threads = ConcurrentHashMap.newKeySet();
    private final AtomicInteger nextId = new AtomicInteger();
    private volatile boolean closed;

    // fault state, guarded by this
    private volatile int armed = -1;               // direction of an armed reset, or -1
    private long armedAtNanos;
    private long refuseUntilNanos;
    private Thread scheduler;
    private boolean resetsRunning;

    // counters
    final AtomicLong accepted = new AtomicLong();
    final AtomicLong refused = new AtomicLong();
    final AtomicLong onwardFailed = new AtomicLong();
    final AtomicLong resetsArmed = new AtomicLong();
    final AtomicLong resetsInHeader = new AtomicLong();
    final AtomicLong resetsInPayload = new AtomicLong();
    final AtomicLong resetsAtBoundary = new AtomicLong();
    final AtomicLong resetsPositionUnknown = new AtomicLong();
    final AtomicLong resetsIdle = new AtomicLong();
    final AtomicLong resetsWithoutConnection = new AtomicLong();
    final AtomicLong resetsImmediate = new AtomicLong();
    final AtomicLong stalls = new AtomicLong();
    final AtomicLongArray bytes = new AtomicLongArray(2);

    /**
     * Starts listening and accepting at once.
     *
     * @param listenAt where host A connects (its {@code tcp.peerPort})
     * @param target host B's listener
     * @param onwardFrom the address onward connections come from: host A's, so host B accepts them as A's
     */
    ChaosProxy(InetSocketAddress listenAt, InetSocketAddress target, InetAddress onwardFrom, long seed)
            throws IOException {
        this.target = target;
        this.onwardFrom = onwardFrom;
        this.random = new SplittableRandom(seed);
        this.server = new ServerSocket();
        server.setReuseAddress(true);
        server.bind(listenAt, 64);
        start("chaos-accept", this::acceptLoop);
    }

    // ------------------------------------------------------------------------------------------------ faults

    /** Resets connections from now on, each reset {@code min..max} (uniformly) after the previous one. */
    synchronized void startResets(Duration min, Duration max) {
        if (resetsRunning) {
            return;
        }
        resetsRunning = true;
        long lo = min.toNanos();
        long hi = max.toNanos();
        scheduler = start("chaos-resets", () -> resetSchedule(lo, hi));
    }

    /** Stops the reset schedule and ends every stall and refusal now; connections open now are left alone. */
    void stopFaults() {
        Thread t;
        synchronized (this) {
            resetsRunning = false;
            armed = -1;
            refuseUntilNanos = 0;
            for (Link l : links) {
                l.stalledUntilNanos = 0;
            }
            t = scheduler;
            scheduler = null;
            notifyAll();
        }
        join(t, JOIN_MILLIS);
    }

    /**
     * Arms one reset: the next bytes of a randomly chosen direction are cut at a random offset (a third of the time
     * inside the next header, if one starts in them), then both sockets are aborted. If that direction carries
     * nothing for 250 ms, the scheduler (not this call) resets the connection where it stands.
     */
    synchronized void resetSoon() {
        armed = random.nextInt(2);
        armedAtNanos = System.nanoTime();
        resetsArmed.incrementAndGet();
        notifyAll();
    }

    /** Aborts every open connection now, wherever its streams stand. */
    void resetAllNow() {
        for (Link l : links) {
            if (l.abort("reset (immediate)")) {
                resetsImmediate.incrementAndGet();
            }
        }
    }

    /** Stops forwarding, both ways, on every connection open now, for {@code d}; their sockets stay open. */
    synchronized void stall(Duration d) {
        long until = System.nanoTime() + d.toNanos();
        for (Link l : links) {
            if (!l.closed.get()) {
                l.stalledUntilNanos = until;
            }
        }
        stalls.incrementAndGet();
        notifyAll();
    }

    /** For {@code d}, accepts new connections and resets them at once. */
    synchronized void refuse(Duration d) {
        refuseUntilNanos = System.nanoTime() + d.toNanos();
    }

    /** Where the proxy listens (host A's {@code tcp.peerPort} goes here). */
    InetSocketAddress listenAddress() {
        return (InetSocketAddress) server.getLocalSocketAddress();
    }

    /** All resets done, by any fault. */
    long resetsDone() {
        return resetsInHeader.get() + resetsInPayload.get() + resetsAtBoundary.get() + resetsPositionUnknown.get()
                + resetsIdle.get() + resetsImmediate.get();
    }

    // ------------------------------------------------------------------------------------------------ observing

    /** A snapshot of one proxied connection. Times are {@link System#nanoTime()}, 0 if not (yet) happened. */
    record LinkInfo(int id, long acceptedNanos, long onwardNanos, long firstByteAToB, long firstByteBToA,
            long bytesAToB, long bytesBToA, long closedNanos, String closeReason) {
    }

    /** Every connection accepted so far, oldest first. */
    List<LinkInfo> links() {
        List<LinkInfo> out = new ArrayList<>();
        for (Link l : links) {
            out.add(l.info());
        }
        return out;
    }

    /**
     * Waits until {@code condition} holds or {@code timeout} passes. The proxy wakes waiters on every connection
     * event; the condition is also re-checked every 20 ms for state the proxy does not see.
     */
    boolean await(BooleanSupplier condition, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        synchronized (this) {
            while (!condition.getAsBoolean()) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return false;
                }
                wait(Math.max(1, Math.min(20, TimeUnit.NANOSECONDS.toMillis(left))));
            }
            return true;
        }
    }

    /** One line: what the proxy did. */
    String stats() {
        return "proxy: accepted=" + accepted + " refused=" + refused + " onwardFailed=" + onwardFailed + " resets="
                + resetsDone() + " (inHeader=" + resetsInHeader + " inPayload=" + resetsInPayload + " atBoundary="
                + resetsAtBoundary + " unknownPos=" + resetsPositionUnknown + " idle=" + resetsIdle + " immediate="
                + resetsImmediate + ", armed=" + resetsArmed + ", noConnection=" + resetsWithoutConnection
                + ") stalls=" + stalls + " bytes A->B=" + bytes.get(A_TO_B) + " B->A=" + bytes.get(B_TO_A);
    }

    // ------------------------------------------------------------------------------------------------ threads

    private void acceptLoop() {
        while (!closed) {
            Socket client;
            try {
                client = server.accept();
            } catch (IOException e) {
                if (!closed) {
                    System.err.println("[chaos-proxy] accept failed: " + e);
                }
                return;
            }
            boolean refuse;
            synchronized (this) {
                refuse = System.nanoTime() < refuseUntilNanos;
            }
            if (refuse || closed) {
                refused.incrementAndGet();
                abortQuietly(client);
                continue;
            }
            accepted.incrementAndGet();
            Link l = new Link(nextId.incrementAndGet(), client);
            links.add(l);
            signal();
            start("chaos-link-" + l.id + "-a2b", () -> l.runAToB());
        }
    }

    private void resetSchedule(long minNanos, long maxNanos) {
        try {
            while (true) {
                long delay;
                synchronized (this) {
                    delay = minNanos + (maxNanos > minNanos ? random.nextLong(maxNanos - minNanos + 1) : 0);
                    long deadline = System.nanoTime() + delay;
                    while (resetsRunning && !closed && System.nanoTime() < deadline) {
                        waitNanos(deadline - System.nanoTime());
                    }
                    if (!resetsRunning || closed) {
                        return;
                    }
                }
                if (links.stream().allMatch(l -> l.closed.get())) {
                    resetsWithoutConnection.incrementAndGet();   // nothing to reset: A is between connections
                    continue;
                }
                resetSoon();
                boolean idle;
                synchronized (this) {
                    long deadline = armedAtNanos + IDLE_RESET_NANOS;
                    while (armed >= 0 && resetsRunning && !closed && System.nanoTime() < deadline) {
                        waitNanos(deadline - System.nanoTime());
                    }
                    idle = armed >= 0 && resetsRunning && !closed;
                    armed = -1;
                }
                if (idle) {
                    // The chosen direction carried nothing: reset the connection where it stands.
                    for (Link l : links) {
                        if (l.abort("reset (idle direction)")) {
                            resetsIdle.incrementAndGet();
                        }
                    }
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Takes the armed reset if it is for {@code dir}: returns the cut offset in a chunk of {@code n} bytes, or -1. */
    private synchronized int takeArmedReset(int dir, int n, FrameTracker tracker) {
        if (armed != dir) {
            return -1;
        }
        armed = -1;
        notifyAll();
        int header = tracker.nextHeaderAt(n);
        if (header >= 0 && random.nextInt(3) == 0) {
            int room = RDS_HEADER - (header == 0 ? tracker.headerFill() : 0);   // header bytes still to come
            int cut = header + 1 + random.nextInt(Math.max(1, room - 1));
            return Math.min(cut, n);
        }
        return random.nextInt(n + 1);
    }

    private void waitNanos(long nanos) throws InterruptedException {
        if (nanos > 0) {
            TimeUnit.NANOSECONDS.timedWait(this, nanos);
        }
    }

    private synchronized void signal() {
        notifyAll();
    }

    private Thread start(String name, Runnable body) {
        Thread t = new Thread(() -> {
            try {
                body.run();
            } finally {
                threads.remove(Thread.currentThread());
            }
        }, name);
        t.setDaemon(true);      // never keeps the test JVM alive, even if close() could not stop it
        threads.add(t);
        t.start();
        return t;
    }

    private static void join(Thread t, long millis) {
        if (t == null || t == Thread.currentThread()) {
            return;
        }
        try {
            t.join(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Stops every thread and closes every socket, waiting at most a few seconds in all. */
    @Override
    public void close() {
        closed = true;
        try {
            server.close();
        } catch (IOException ignored) {
            // closing anyway
        }
        synchronized (this) {
            resetsRunning = false;
            notifyAll();
        }
        for (Link l : links) {
            l.abort("proxy closed");
        }
        long deadline = System.currentTimeMillis() + JOIN_MILLIS;
        for (Thread t : new ArrayList<>(threads)) {
            join(t, Math.max(1, deadline - System.currentTimeMillis()));
        }
        List<String> stuck = new ArrayList<>();
        for (Thread t : threads) {
            if (t.isAlive()) {
                stuck.add(t.getName());
                t.interrupt();
            }
        }
        if (!stuck.isEmpty()) {
            System.err.println("[chaos-proxy] threads still running after close: " + stuck);
        }
    }

    private static void abortQuietly(Socket s) {
        if (s == null) {
            return;
        }
        try {
            s.setSoLinger(true, 0);      // close() now sends RST and drops unsent bytes
        } catch (IOException ignored) {
            // already closed
        }
        try {
            s.close();
        } catch (IOException ignored) {
            // already closed
        }
    }

    // ------------------------------------------------------------------------------------------------ one link

    /** One proxied connection: the socket from A, the one to B, a pump thread each way. */
    private final class Link {
        final int id;
        final Socket client;
        volatile Socket onward;
        final long acceptedNanos = System.nanoTime();
        volatile long onwardNanos;
        volatile long closedNanos;
        volatile String closeReason;
        volatile long stalledUntilNanos;
        final AtomicLongArray firstByte = new AtomicLongArray(2);
        final AtomicLongArray linkBytes = new AtomicLongArray(2);
        final FrameTracker[] trackers = {new FrameTracker(), new FrameTracker()};
        final AtomicBoolean closed = new AtomicBoolean();
        final AtomicInteger directionsEnded = new AtomicInteger();

        Link(int id, Socket client) {
            this.id = id;
            this.client = client;
        }

        LinkInfo info() {
            return new LinkInfo(id, acceptedNanos, onwardNanos, firstByte.get(A_TO_B), firstByte.get(B_TO_A),
                    linkBytes.get(A_TO_B), linkBytes.get(B_TO_A), closedNanos, closeReason);
        }

        /**
         * Binds the onward socket to a port congruent to A's source port modulo 8: A encodes its path index there
         * (SPORT_IDX) and B places the connection by it, so the proxy must keep it, as any NAT in front of
         * multipath RDS must. Port groups are tried from a random one until one is free.
         */
        private Socket bindKeepingPathIndex(int clientPort) throws IOException {
            int residue = clientPort & 7;
            int groups = (60999 - 32768) / 8;
            int first = java.util.concurrent.ThreadLocalRandom.current().nextInt(groups);
            IOException last = null;
            for (int attempt = 0; attempt < 64; attempt++) {
                int port = 32768 + ((first + attempt) % groups) * 8 + residue;
                Socket s = new Socket();
                try {
                    s.setReuseAddress(true);
                    s.bind(new InetSocketAddress(onwardFrom, port));
                    return s;
                } catch (java.net.BindException e) {
                    s.close();
                    last = e;
                }
            }
            throw last;
        }

        /** Connects onward, starts the other direction, and pumps A to B. */
        void runAToB() {
            Socket s = null;
            try {
                client.setTcpNoDelay(true);
                s = bindKeepingPathIndex(client.getPort());
                s.setTcpNoDelay(true);
                s.connect(target, 5_000);
            } catch (IOException e) {
                onwardFailed.incrementAndGet();
                abortQuietly(s);
                abort("onward connect failed: " + e.getMessage());
                return;
            }
            Socket connected = s;
            onward = connected;
            if (closed.get()) {            // closed (by a fault or close()) while connecting
                abortQuietly(connected);
                return;
            }
            onwardNanos = System.nanoTime();
            signal();
            start("chaos-link-" + id + "-b2a", () -> pump(B_TO_A, connected, client));
            pump(A_TO_B, client, connected);
        }

        private void pump(int dir, Socket from, Socket to) {
            byte[] buf = new byte[CHUNK];
            FrameTracker tracker = trackers[dir];
            try {
                InputStream in = from.getInputStream();
                OutputStream out = to.getOutputStream();
                while (!closed.get()) {
                    int n = in.read(buf);
                    if (n < 0) {
                        // An orderly close of one side: pass it on, and close the link once both sides have.
                        try {
                            to.shutdownOutput();
                        } catch (IOException ignored) {
                            // the other side is gone already
                        }
                        if (directionsEnded.incrementAndGet() == 2) {
                            close("closed by both hosts");
                        }
                        return;
                    }
                    if (n == 0) {
                        continue;
                    }
                    awaitNotStalled();
                    if (closed.get()) {
                        return;
                    }
                    int cut = armed == dir ? takeArmedReset(dir, n, tracker) : -1;
                    if (cut >= 0) {
                        forward(dir, out, buf, cut, tracker);
                        int where = tracker.position();
                        (where == FrameTracker.IN_HEADER ? resetsInHeader
                                : where == FrameTracker.IN_PAYLOAD ? resetsInPayload
                                : where == FrameTracker.AT_BOUNDARY ? resetsAtBoundary
                                : resetsPositionUnknown).incrementAndGet();
                        abort("reset at byte " + tracker.offset() + " of " + (dir == A_TO_B ? "A->B" : "B->A")
                                + " (" + FrameTracker.describe(where) + ")");
                        return;
                    }
                    forward(dir, out, buf, n, tracker);
                }
            } catch (IOException e) {
                abort((dir == A_TO_B ? "A->B: " : "B->A: ") + e.getMessage());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                abort("interrupted");
            }
        }

        private void forward(int dir, OutputStream out, byte[] buf, int n, FrameTracker tracker) throws IOException {
            if (n == 0) {
                return;
            }
            // Counted before the write: a reader that has the bytes may read the count (ChaosProxySelfTest did, and
            // once saw it short by the last chunk); a failed write aborts the connection anyway.
            bytes.addAndGet(dir, n);
            out.write(buf, 0, n);
            tracker.advance(buf, 0, n);
            linkBytes.addAndGet(dir, n);
            if (firstByte.compareAndSet(dir, 0, System.nanoTime())) {
                signal();
            }
        }

        private void awaitNotStalled() throws InterruptedException {
            if (stalledUntilNanos == 0) {
                return;
            }
            synchronized (ChaosProxy.this) {
                long left;
                while (!closed.get() && !ChaosProxy.this.closed
                        && (left = stalledUntilNanos - System.nanoTime()) > 0 && stalledUntilNanos != 0) {
                    waitNanos(left);
                }
            }
        }

        /** Aborts both sockets (RST); false if the link was closed already. */
        boolean abort(String reason) {
            if (!closed.compareAndSet(false, true)) {
                return false;
            }
            closeReason = reason;
            closedNanos = System.nanoTime();
            abortQuietly(client);
            abortQuietly(onward);
            signal();
            return true;
        }

        /** Closes both sockets normally after both hosts closed theirs. */
        private void close(String reason) {
            if (!closed.compareAndSet(false, true)) {
                return;
            }
            closeReason = reason;
            closedNanos = System.nanoTime();
            closeQuietly(client);
            closeQuietly(onward);
            signal();
        }

        private void closeQuietly(Socket s) {
            try {
                if (s != null) {
                    s.close();
                }
            } catch (IOException ignored) {
                // closing anyway
            }
        }
    }

    // ------------------------------------------------------------------------------------------------ framing

    /** Follows the RDS framing of one direction's byte stream, to say where a cut fell. */
    static final class FrameTracker {
        static final int UNKNOWN = -1;
        static final int AT_BOUNDARY = 0;
        static final int IN_HEADER = 1;
        static final int IN_PAYLOAD = 2;

        private final byte[] header = new byte[RDS_HEADER];
        private int headerFill;
        private long payloadLeft;
        private long offset;
        private boolean lost;

        void advance(byte[] b, int off, int len) {
            offset += len;
            int end = off + len;
            while (off < end && !lost) {
                if (payloadLeft > 0) {
                    int n = (int) Math.min(payloadLeft, end - off);
                    payloadLeft -= n;
                    off += n;
                    continue;
                }
                int n = Math.min(RDS_HEADER - headerFill, end - off);
                System.arraycopy(b, off, header, headerFill, n);
                headerFill += n;
                off += n;
                if (headerFill == RDS_HEADER) {
                    headerFill = 0;
                    long hlen = ((header[16] & 0xFFL) << 24) | ((header[17] & 0xFF) << 16)
                            | ((header[18] & 0xFF) << 8) | (header[19] & 0xFF);
                    if (hlen > (1 << 20)) {
                        lost = true;        // not an RDS stream (or not from its start): stop classifying
                    }
                    payloadLeft = hlen;
                }
            }
        }

        int position() {
            return lost ? UNKNOWN : headerFill > 0 ? IN_HEADER : payloadLeft > 0 ? IN_PAYLOAD : AT_BOUNDARY;
        }

        int headerFill() {
            return headerFill;
        }

        long offset() {
            return offset;
        }

        /** Where, in the next {@code len} bytes, a header starts (0 also when inside one), or -1. */
        int nextHeaderAt(int len) {
            if (lost) {
                return -1;
            }
            if (payloadLeft == 0) {
                return 0;
            }
            return payloadLeft < len ? (int) payloadLeft : -1;
        }

        static String describe(int where) {
            return switch (where) {
                case AT_BOUNDARY -> "between frames";
                case IN_HEADER -> "inside a header";
                case IN_PAYLOAD -> "inside a payload";
                default -> "position unknown";
            };
        }
    }

    @Override
    public String toString() {
        return "ChaosProxy[" + server.getLocalSocketAddress() + " -> " + target + "]";
    }
}
