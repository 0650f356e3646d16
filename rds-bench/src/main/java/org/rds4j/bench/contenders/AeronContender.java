package org.rds4j.bench.contenders;

import io.aeron.Aeron;
import io.aeron.CommonContext;
import io.aeron.ExclusivePublication;
import io.aeron.Subscription;
import io.aeron.driver.MediaDriver;
import io.aeron.driver.ThreadingMode;
import java.io.File;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.channels.DatagramChannel;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.agrona.CloseHelper;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.SleepingMillisIdleStrategy;
import org.rds4j.bench.Contender;
import org.rds4j.bench.Endpoint;
import org.rds4j.bench.Link;

/**
 * Aeron with an embedded media driver, over IPC (shared memory in one process: the floor for in-JVM messaging) or UDP
 * on 127.0.0.1. Benchmark scope only: rds4j does not use Aeron.
 *
 * <p>The driver runs in {@link ThreadingMode#SHARED} mode, one thread, and every Aeron thread backs off from spinning
 * to parking when idle ({@link BackoffIdleStrategy}): Aeron's low-latency setup (dedicated busy-spinning threads)
 * needs more cores than the harness's two threads leave on a small machine, and would then starve them. A
 * busy-spinning Aeron variant on a large machine is one more contender class.
 */
public final class AeronContender implements Contender {
    private static final int STREAM_A_TO_B = 1001;
    private static final int STREAM_B_TO_A = 1002;
    /** Aeron's largest message is an eighth of a term: 16 MiB terms carry the 1 MiB messages with room to spare. */
    private static final int TERM_LENGTH = 16 << 20;
    private static final long CONNECT_TIMEOUT_NANOS = TimeUnit.SECONDS.toNanos(10);
    private static final AtomicInteger INSTANCES = new AtomicInteger();

    private final boolean udp;

    public AeronContender(boolean udp) {
        this.udp = udp;
    }

    @Override
    public String name() {
        return udp ? "aeron-udp" : "aeron-ipc";
    }

    @Override
    public String description() {
        return "Aeron " + io.aeron.AeronVersion.VERSION + ", embedded media driver (shared thread, backoff idle), "
                + (udp ? "UDP on 127.0.0.1" : "IPC");
    }

    @Override
    public Link open(int maxMessageSize) throws IOException {
        try {
            org.agrona.BufferUtil.address(java.nio.ByteBuffer.allocateDirect(1));
        } catch (LinkageError e) {
            throw new IOException("Aeron's Agrona cannot load on this JVM; run it with --add-exports "
                    + "java.base/jdk.internal.misc=ALL-UNNAMED (./rds4j bench does)", e);
        }
        String dir = CommonContext.getAeronDirectoryName() + "-rds4j-bench-" + ProcessHandle.current().pid() + "-"
                + INSTANCES.incrementAndGet();
        MediaDriver driver = MediaDriver.launch(new MediaDriver.Context()
                .aeronDirectoryName(dir)
                .threadingMode(ThreadingMode.SHARED)
                .sharedIdleStrategy(new BackoffIdleStrategy())
                .ipcTermBufferLength(TERM_LENGTH)
                .publicationTermBufferLength(TERM_LENGTH)
                .dirDeleteOnStart(true)
                .dirDeleteOnShutdown(true));
        Aeron aeron = null;
        try {
            aeron = Aeron.connect(new Aeron.Context().aeronDirectoryName(driver.aeronDirectoryName()));
            String channel = udp ? "aeron:udp?endpoint=127.0.0.1:" + freeUdpPort() : "aeron:ipc";
            ExclusivePublication toB = aeron.addExclusivePublication(channel, STREAM_A_TO_B);
            Subscription fromA = aeron.addSubscription(channel, STREAM_A_TO_B);
            ExclusivePublication toA = aeron.addExclusivePublication(channel, STREAM_B_TO_A);
            Subscription fromB = aeron.addSubscription(channel, STREAM_B_TO_A);
            awaitConnected(toB, fromA, toA, fromB);
            if (toB.maxMessageLength() < maxMessageSize) {
                throw new IOException("Aeron's largest message here is " + toB.maxMessageLength() + " bytes");
            }
            AeronLink link = new AeronLink(driver, aeron);
            link.a = new AeronEndpoint(toB, fromB, link::isClosed, link.inside);
            link.b = new AeronEndpoint(toA, fromA, link::isClosed, link.inside);
            return link;
        } catch (IOException | RuntimeException e) {
            CloseHelper.quietClose(aeron);
            CloseHelper.quietClose(driver);
            throw e;
        }
    }

    private static void awaitConnected(ExclusivePublication p1, Subscription s1, ExclusivePublication p2,
            Subscription s2) throws IOException {
        IdleStrategy idle = new SleepingMillisIdleStrategy(1);
        long deadline = System.nanoTime() + CONNECT_TIMEOUT_NANOS;
        while (!(p1.isConnected() && s1.isConnected() && p2.isConnected() && s2.isConnected())) {
            if (System.nanoTime() - deadline > 0) {
                throw new IOException("Aeron publications did not connect within 10 s");
            }
            idle.idle();
        }
    }

    /** A UDP port free on 127.0.0.1 a moment ago (another process could take it; then the driver reports it). */
    private static int freeUdpPort() throws IOException {
        try (DatagramChannel probe = DatagramChannel.open()) {
            probe.bind(new InetSocketAddress("127.0.0.1", 0));
            return ((InetSocketAddress) probe.getLocalAddress()).getPort();
        }
    }

    private static final class AeronLink implements Link {
        private final MediaDriver driver;
        private final Aeron aeron;
        private AeronEndpoint a;
        private AeronEndpoint b;
        /** Threads inside an endpoint call; see {@link AeronEndpoint}. */
        private final AtomicInteger inside = new AtomicInteger();
        private volatile boolean closed;

        AeronLink(MediaDriver driver, Aeron aeron) {
            this.driver = driver;
            this.aeron = aeron;
        }

        boolean isClosed() {
            return closed;
        }

        @Override
        public Endpoint a() {
            return a;
        }

        @Override
        public Endpoint b() {
            return b;
        }

        @Override
        public synchronized void close() {
            if (closed) {
                return;
            }
            // The endpoints' loops see the flag within one idle period and stop touching the publications.
            closed = true;
            IdleStrategy idle = new SleepingMillisIdleStrategy(1);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (inside.get() > 0) {
                if (System.nanoTime() - deadline > 0) {
                    // Unmapping under a running loop would crash the JVM: leak this driver instead.
                    System.err.println("bench: an Aeron endpoint call did not return; its driver is left running");
                    return;
                }
                idle.idle();
            }
            CloseHelper.quietClose(aeron);
            CloseHelper.quietClose(driver);
            File dir = new File(driver.aeronDirectoryName());
            if (dir.exists()) {
                org.agrona.IoUtil.delete(dir, true);
            }
        }
    }
}
