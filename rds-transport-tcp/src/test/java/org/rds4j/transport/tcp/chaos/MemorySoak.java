package org.rds4j.transport.tcp.chaos;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.rds4j.RdsSocket;
import org.rds4j.RdsSocketOptions;
import org.rds4j.RdsStack;
import org.rds4j.RdsStackConfig;
import org.rds4j.core.wire.RdsHeader;
import org.rds4j.transport.tcp.ChurnPeer;

/**
 * The soak ({@code ./mvnw -Psoak verify}; not in the default build: its class name ends in Soak, which only that
 * profile runs). A receiver in its own JVM with the JVM's default options ({@link SoakReceiverMain}) takes
 * {@code rds4j.soak.messages} messages (10,000,000 unless set) of mixed sizes (log-uniform, 0 to 16 KiB) from 4
 * senders of this JVM over 8 paths, through a {@link ChaosProxy} that resets a path's TCP connection every 200 ms
 * to 2 s and every path every 5 s; meanwhile a {@link ChurnPeer} opens 200 connections a second from 40 addresses
 * (half of them with a corrupted frame) and holds 100 that never read, and another peer floods 100,000 pings a
 * second and reads no pong. Every message must arrive once and in order, and the receiver's peak resident memory ({@code VmHWM}) stay
 * under 512 MB. The figures are printed at the end; docs/reliability.md records the last run.
 */
class MemorySoak {
    private static final int STREAMS = 4;
    private static final int MAX_SIZE = 16 * 1024;
    private static final int RECV_PORT = 6100;
    private static final int SEND_PORT = 6200;
    private static final long RSS_LIMIT_KB = 512L * 1000;
    private static final InetAddress SENDER = address("127.0.251.10");
    private static final InetAddress RECEIVER = address("127.0.251.100");

    @Test
    void tenMillionMessagesThroughResetsChurnAndAPingFloodKeepTheReceiverUnder512MB() throws Exception {
        long seed = Chaos.seed("MemorySoak");
        long perStream = Math.max(1, Chaos.longProperty("rds4j.soak.messages", 10_000_000) / STREAMS);
        long total = perStream * STREAMS;
        int port = Chaos.freePort(-1);
        int proxyPort = Chaos.freePort(port);
        String java = System.getProperty("java.home") + File.separator + "bin" + File.separator + "java";
        Process receiver = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"),
                "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", SoakReceiverMain.class.getName(),
                RECEIVER.getHostAddress(), String.valueOf(port), String.valueOf(RECV_PORT), String.valueOf(STREAMS),
                String.valueOf(perStream), String.valueOf(seed), String.valueOf(MAX_SIZE), SENDER.getHostAddress(),
                String.valueOf(SEND_PORT)).redirectErrorStream(true).start();
        CountDownLatch ready = new CountDownLatch(1);
        CountDownLatch finished = new CountDownLatch(1);
        AtomicReference<String> doneLine = new AtomicReference<>();
        Thread out = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(receiver.getInputStream(),
                    StandardCharsets.UTF_8))) {
                String line;
                while ((line = in.readLine()) != null) {
                    System.out.println("[receiver] " + line);
                    if (line.startsWith("READY")) {
                        ready.countDown();
                    } else if (line.startsWith("DONE")) {
                        doneLine.set(line);
                        finished.countDown();
                    }
                }
            } catch (IOException e) {
                // the receiver is gone
            }
            finished.countDown();
        }, "soak-receiver-out");
        out.setDaemon(true);
        out.start();
        AtomicBoolean running = new AtomicBoolean(true);
        AtomicLong peakKb = new AtomicLong();
        Thread rss = new Thread(() -> {
            while (running.get()) {
                peakKb.accumulateAndGet(vmHwmKb(receiver.pid()), Math::max);
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(200));   // a sampling period
            }
        }, "soak-rss");
        rss.setDaemon(true);
        rss.start();
        List<RdsSocket> senders = new ArrayList<>();
        List<Thread> threads = new ArrayList<>();
        try (ChaosProxy proxy = new ChaosProxy(Chaos.at(RECEIVER, proxyPort), Chaos.at(RECEIVER, port), SENDER,
                seed);
             RdsStack a = RdsStack.create(RdsStackConfig.builder().name("soak-sender").address(SENDER).tcpPort(port)
                     .defaultTransport("tcp").property("tcp.peerPort", String.valueOf(proxyPort)).paths(8)
                     .jmx(false).build())) {
            assertTrue(ready.await(60, TimeUnit.SECONDS), "the receiver started");
            ChurnPeer churn = new ChurnPeer(RECEIVER, port, RECV_PORT, 200, 0, 100, 40, "127.0.250", 2, seed)
                    .start();
            AtomicLong pings = new AtomicLong();
            Thread flood = new Thread(() -> pingFlood(address("127.0.250.200"), port, running, pings), "soak-pings");
            threads.add(flood);
            flood.start();
            proxy.startResets(Duration.ofMillis(200), Duration.ofSeconds(2));
            Thread allAtOnce = new Thread(() -> {
                while (running.get()) {
                    LockSupport.parkNanos(TimeUnit.SECONDS.toNanos(5));      // the schedule of all-path resets
                    proxy.resetAllNow();
                }
            }, "soak-reset-all");
            threads.add(allAtOnce);
            allAtOnce.start();

            long start = System.nanoTime();
            AtomicLong bytes = new AtomicLong();
            AtomicReference<String> sendError = new AtomicReference<>();
            for (int i = 0; i < STREAMS; i++) {
                RdsSocket s = a.openSocket();
                senders.add(s);
                s.setOption(RdsSocketOptions.SO_SNDBUF, 1 << 20);
                s.bind(Chaos.at(SENDER, SEND_PORT + i));
                int stream = i;
                InetSocketAddress dest = Chaos.at(RECEIVER, RECV_PORT + i);
                Thread t = new Thread(() -> {
                    byte[] body = new byte[MAX_SIZE];
                    ByteBuffer view = ByteBuffer.wrap(body);
                    try {
                        for (long k = 0; k < perStream; k++) {
                            long hash = Chaos.messageHash(seed, stream, k);
                            int size = Chaos.logUniformSize(hash, MAX_SIZE);
                            Chaos.fillBody(body, size, hash, stream, k);
                            view.limit(size).position(0);
                            s.send(view, dest);
                            bytes.addAndGet(size);
                        }
                    } catch (Throwable e) {
                        sendError.compareAndSet(null, "sender " + stream + ": " + e);
                    }
                }, "soak-sender-" + i);
                threads.add(t);
                t.start();
            }
            boolean done = finished.await(Chaos.longProperty("rds4j.soak.minutes", 60), TimeUnit.MINUTES);
            double seconds = (System.nanoTime() - start) / 1e9;
            running.set(false);
            churn.close();
            proxy.stopFaults();
            peakKb.accumulateAndGet(vmHwmKb(receiver.pid()), Math::max);
            String line = doneLine.get();
            String figures = String.format("soak: %d messages (%d per sender x %d), %.1f GB, sizes 0..%d log-uniform,"
                            + " in %.0f s (%.0f msgs/s); proxy resets armed %d (+ all paths every 5 s); %s; %d pings"
                            + " flooded; receiver peak RSS (VmHWM) %d MiB, limit %d MB; seed %d%n  receiver: %s",
                    total, perStream, STREAMS, bytes.get() / 1e9, MAX_SIZE, seconds, total / seconds,
                    proxy.resetsArmed.get(), churn.summary(), pings.get(), peakKb.get() / 1024,
                    RSS_LIMIT_KB / 1000, seed, line);
            System.out.println(figures);
            assertTrue(done && line != null, "the receiver completed every stream: " + figures);
            assertTrue(sendError.get() == null, sendError.get());
            assertTrue(line.contains("failure=null"), figures);
            for (int i = 0; i < STREAMS; i++) {
                String expect = String.format("stream%d[received=%d lost=0 duplicates=0 outOfOrder=0 corrupt=0", i,
                        perStream);
                assertTrue(line.contains(expect), "stream " + i + " whole and in order: " + figures);
            }
            assertTrue(peakKb.get() < RSS_LIMIT_KB, "receiver RSS under 512 MB: " + figures);
        } finally {
            running.set(false);
            for (RdsSocket s : senders) {
                s.close();
            }
            receiver.getOutputStream().close();
            if (!receiver.waitFor(30, TimeUnit.SECONDS)) {
                receiver.destroyForcibly();
            }
            for (Thread t : threads) {
                t.join(TimeUnit.SECONDS.toMillis(30));
            }
        }
    }

    /** The process's peak resident set, from /proc; 0 once it is gone. */
    private static long vmHwmKb(long pid) {
        try {
            for (String l : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
                if (l.startsWith("VmHWM:")) {
                    return Long.parseLong(l.replaceAll("[^0-9]", ""));
                }
            }
        } catch (IOException | RuntimeException e) {
            // gone, or not Linux
        }
        return 0;
    }

    /**
     * Pings from one connection, 1,000 every 10 ms (a flood the receiver's one I/O thread serves beside the honest
     * traffic; unpaced, it took that thread from the honest streams), never reading a pong; reconnects when dropped.
     */
    private static void pingFlood(InetAddress from, int tcpPort, AtomicBoolean running, AtomicLong pings) {
        RdsHeader h = new RdsHeader();
        ByteBuffer batch = ByteBuffer.allocate(1000 * RdsHeader.SIZE);
        while (running.get()) {
            try (SocketChannel ch = SocketChannel.open()) {
                ch.bind(new InetSocketAddress(from, 0));
                ch.connect(new InetSocketAddress(RECEIVER, tcpPort));
                ch.configureBlocking(false);
                for (long seq = 1; running.get(); ) {
                    batch.clear();
                    for (int i = 0; i < 1000; i++) {
                        h.clear().sequence(seq++).sourcePort(7000).destinationPort(0);
                        h.encode(batch);
                    }
                    batch.flip();
                    while (running.get() && batch.hasRemaining()) {
                        if (ch.write(batch) == 0) {
                            LockSupport.parkNanos(1_000_000);             // TCP holds us back
                        }
                    }
                    pings.addAndGet(1000);
                    LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));   // the flood's pace
                }
            } catch (IOException e) {
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(100)); // dropped: reconnect a little later
            }
        }
    }

    private static InetAddress address(String a) {
        try {
            return InetAddress.getByName(a);
        } catch (java.net.UnknownHostException e) {
            throw new IllegalArgumentException(e);
        }
    }
}
