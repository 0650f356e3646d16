package org.rds4j.transport.tcp;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.rds4j.core.wire.RdsHeader;

/**
 * A hostile peer that churns connections: from a range of loopback addresses it opens RDS/TCP connections to a
 * victim, sends each one a ping (which the victim answers) and one to twenty data frames of mixed sizes, and closes
 * it; every other connection has one frame slightly corrupted (a length over the cap, a payload cut short by a
 * reset, a sequence number going back, or a garbled header). Optionally it also holds idle connections open and
 * reopens those the victim drops. It targets 127.0.0.0/8 only.
 *
 * <p>Used by {@link ConnectionChurnTest} in the build and, through {@link #main}, from the command line against a
 * stack in another process: {@code ChurnPeer VICTIM TCP_PORT DATA_PORT SECONDS [key=value...]} with {@code
 * rate=N} (connections a second, 0 as fast as it can), {@code total=N} (stop after N, 0 no limit), {@code idle=N},
 * {@code addresses=N}, {@code net=127.0.3} (the first three bytes of the source addresses), {@code threads=N},
 * {@code seed=N}. It prints what it did when it ends.
 */
public final class ChurnPeer implements AutoCloseable {
    /** The largest payload of a churned frame. */
    static final int MAX_FRAME = 128 * 1024;

    private final InetAddress victim;
    private final int tcpPort;
    private final int dataPort;
    private final int rate;
    private final long total;
    private final int idle;
    private final int addresses;
    private final String net;
    private final long seed;
    private final AtomicBoolean running = new AtomicBoolean(true);
    private final AtomicLong started = new AtomicLong();
    private final AtomicLong connected = new AtomicLong();
    private final AtomicLong failed = new AtomicLong();
    private final AtomicLong corrupted = new AtomicLong();
    private final AtomicLong frames = new AtomicLong();
    private final AtomicLong idleOpened = new AtomicLong();
    private final List<Thread> threads = new ArrayList<>();
    private final long startNanos = System.nanoTime();

    /**
     * @param victim the victim's address, in 127.0.0.0/8
     * @param dataPort the RDS port the data frames go to
     * @param rate connections a second over all threads, 0 as fast as they go
     * @param total connections to open in all, 0 without limit (until {@link #close})
     * @param idle connections to hold open without a word
     * @param addresses how many source addresses, {@code net.1} on
     */
    public ChurnPeer(InetAddress victim, int tcpPort, int dataPort, int rate, long total, int idle, int addresses, String net,
            int threadCount, long seed) {
        if (!victim.isLoopbackAddress() || !net.startsWith("127.")) {
            throw new IllegalArgumentException("the churn peer targets 127.0.0.0/8 only");
        }
        this.victim = victim;
        this.tcpPort = tcpPort;
        this.dataPort = dataPort;
        this.rate = rate;
        this.total = total;
        this.idle = idle;
        this.addresses = addresses;
        this.net = net;
        this.seed = seed;
        for (int t = 0; t < threadCount; t++) {
            int id = t;
            threads.add(new Thread(() -> churn(id, threadCount), "churn-" + t));
        }
        if (idle > 0) {
            threads.add(new Thread(this::holdIdle, "churn-idle"));
        }
    }

    /** Starts the threads; returns this. */
    public ChurnPeer start() {
        for (Thread t : threads) {
            t.setDaemon(true);
            t.start();
        }
        return this;
    }

    /** Whether every churning thread is done ({@code total} reached). */
    boolean churnDone() {
        return total > 0 && started.get() >= total;
    }

    public long connected() {
        return connected.get();
    }

    public long failed() {
        return failed.get();
    }

    long corrupted() {
        return corrupted.get();
    }

    long frames() {
        return frames.get();
    }

    /** Stops every thread and waits for them (bounded: each ends within its socket timeouts). */
    @Override
    public void close() throws InterruptedException {
        running.set(false);
        for (Thread t : threads) {
            t.interrupt();
            t.join(TimeUnit.SECONDS.toMillis(30));
            if (t.isAlive()) {
                throw new IllegalStateException(t.getName() + " did not stop within 30 s");
            }
        }
    }

    public String summary() {
        double s = (System.nanoTime() - startNanos) / 1e9;
        return String.format("churn: %d connections in %.1f s (%.0f/s), %d refused or failed, %d with a corrupted"
                + " frame, %d frames, %d idle connections opened; seed %d", connected.get(), s, connected.get() / s,
                failed.get(), corrupted.get(), frames.get(), idleOpened.get(), seed);
    }

    private InetAddress source(long i) throws IOException {
        return InetAddress.getByName(net + "." + (1 + i % addresses));
    }

    private void churn(int id, int threadCount) {
        SplittableRandom random = new SplittableRandom(seed + id);
        ByteBuffer out = ByteBuffer.allocate(RdsHeader.SIZE * 2 + MAX_FRAME);
        RdsHeader h = new RdsHeader();
        long perThreadIntervalNanos = rate > 0 ? TimeUnit.SECONDS.toNanos(1) * threadCount / rate : 0;
        long next = System.nanoTime();
        while (running.get()) {
            long i = started.getAndIncrement();
            if (total > 0 && i >= total) {
                return;
            }
            if (perThreadIntervalNanos > 0) {
                next += perThreadIntervalNanos;
                long wait = next - System.nanoTime();
                if (wait > 0) {
                    LockSupport.parkNanos(wait);         // pacing the churn, not waiting for an event
                }
            }
            try {
                oneConnection(source(i), i % 2 == 1, random, out, h);
            } catch (IOException e) {
                failed.incrementAndGet();                // refused or reset: what a flood meets
            }
        }
    }

    private void oneConnection(InetAddress from, boolean corrupt, SplittableRandom random, ByteBuffer out,
            RdsHeader h) throws IOException {
        SocketChannel ch = SocketChannel.open();
        boolean reset = corrupt || random.nextInt(4) == 0;
        try {
            ch.setOption(StandardSocketOptions.SO_REUSEADDR, true);
            ch.socket().setSoTimeout(2000);
            RawPeer.connect(ch, from, victim, tcpPort);
            connected.incrementAndGet();
            // The ping any RDS/TCP peer may open with: the victim answers it with a pong, so it writes too.
            out.clear();
            h.clear().sequence(1).sourcePort(0).destinationPort(0).flags(RdsHeader.FLAG_ACK_REQUIRED);
            h.encode(out);
            out.flip();
            RawPeer.writeFully(ch, out);
            int n = 1 + random.nextInt(20);
            int bad = corrupt ? random.nextInt(n) : -1;
            if (corrupt) {
                corrupted.incrementAndGet();
            }
            for (int f = 0; f < n; f++) {
                // One frame in four is large enough for the victim to take a direct buffer for it (64 KiB on).
                int len = random.nextInt(4) == 0 ? 64 * 1024 + random.nextInt(MAX_FRAME - 64 * 1024 + 1)
                        : random.nextInt(2048);
                out.clear();
                h.clear().sequence(2 + f).length(len).sourcePort(40000 + random.nextInt(1000))
                        .destinationPort(dataPort).flags(RdsHeader.FLAG_ACK_REQUIRED);
                boolean cut = false;
                if (f == bad) {
                    switch (random.nextInt(4)) {
                        case 0 -> h.length(16L << 20);                       // over any receiver's cap
                        case 1 -> cut = true;                                // the payload ends early, by a reset
                        case 2 -> h.sequence(1);                             // a sequence number going back
                        default -> h.flags(0xff).credit(0xff).padding(-1);   // every flag and reserved bit set
                    }
                }
                h.encode(out);
                int body = cut ? len / 2 : len;
                out.position(out.position() + body).flip();
                RawPeer.writeFully(ch, out);
                frames.incrementAndGet();
                if (cut || h.length() > MAX_FRAME) {
                    reset = true;
                    break;
                }
            }
        } finally {
            if (reset && ch.isOpen()) {
                try {
                    ch.setOption(StandardSocketOptions.SO_LINGER, 0);
                } catch (IOException e) {
                    // closed by the victim already: the close below is all there is to do
                }
            }
            ch.close();
        }
    }

    private void holdIdle() {
        List<SocketChannel> open = new ArrayList<>();
        ByteBuffer probe = ByteBuffer.allocate(64 * 1024);
        long i = 0;
        try {
            while (running.get()) {
                while (open.size() < idle && running.get()) {
                    try {
                        SocketChannel ch = RawPeer.connect(source(i++), victim, tcpPort);
                        ch.configureBlocking(false);
                        open.add(ch);
                        idleOpened.incrementAndGet();
                    } catch (IOException e) {
                        failed.incrementAndGet();
                        break;
                    }
                }
                for (int k = open.size() - 1; k >= 0; k--) {
                    try {
                        if (open.get(k).read(probe.clear()) < 0) {
                            open.remove(k).close();              // dropped by the victim: open another
                        }
                    } catch (IOException e) {
                        closeQuietly(open.remove(k));
                    }
                }
                LockSupport.parkNanos(100_000_000);             // a sweep every 100 ms, not a wait for an event
            }
        } finally {
            for (SocketChannel ch : open) {
                closeQuietly(ch);
            }
        }
    }

    private static void closeQuietly(SocketChannel ch) {
        try {
            ch.close();
        } catch (IOException e) {
            // nothing left to do with it
        }
    }

    /**
     * Runs a churn from the command line until the time is up or the total reached; see the class comment.
     *
     * @param args VICTIM TCP_PORT DATA_PORT SECONDS [key=value...]
     */
    public static void main(String[] args) throws Exception {
        InetAddress victim = InetAddress.getByName(args[0]);
        int tcpPort = Integer.parseInt(args[1]);
        int dataPort = Integer.parseInt(args[2]);
        long seconds = Long.parseLong(args[3]);
        java.util.Map<String, String> o = new java.util.HashMap<>();
        for (int i = 4; i < args.length; i++) {
            String[] kv = args[i].split("=", 2);
            o.put(kv[0], kv[1]);
        }
        long seed = Long.parseLong(o.getOrDefault("seed", Long.toString(System.nanoTime())));
        try (ChurnPeer p = new ChurnPeer(victim, tcpPort, dataPort, Integer.parseInt(o.getOrDefault("rate", "200")),
                Long.parseLong(o.getOrDefault("total", "0")), Integer.parseInt(o.getOrDefault("idle", "0")),
                Integer.parseInt(o.getOrDefault("addresses", "40")), o.getOrDefault("net", "127.0.3"),
                Integer.parseInt(o.getOrDefault("threads", "4")), seed).start()) {
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
            while (System.nanoTime() - end < 0 && !p.churnDone()) {
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(100));
            }
            System.out.println(p.summary());
        }
    }
}
