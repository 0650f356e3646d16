package org.rds4j.transport.tcp.chaos;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;
import org.rds4j.EtimedoutException;
import org.rds4j.RdsMessageInfo;
import org.rds4j.RdsSocket;
import org.rds4j.RdsSocketOptions;
import org.rds4j.RdsStack;
import org.rds4j.RdsStackConfig;

/**
 * The receiving host of {@link MemorySoak}, in its own JVM with the JVM's default options, so that its resident memory
 * is what a user's receiver would have. Binds one socket per stream at {@code address:basePort+i}, checks every message
 * of stream {@code i} from {@code source:sourceBasePort+i} with a {@link StreamChecker}, prints {@code READY} once
 * bound, {@code PROGRESS ...} every 5 s, and once every stream is complete (or its standard input closes) a {@code DONE}
 * line with each stream's figures, its counters and its off-heap figures. Messages from any other source (the hostile
 * peers' frames) are counted and ignored. Exits when its standard input closes, so that it never outlives the test.
 *
 * <p>Arguments: address tcpPort basePort streams perStream seed maxSize source sourceBasePort.
 */
public final class SoakReceiverMain {
    private SoakReceiverMain() {
    }

    public static void main(String[] args) throws Exception {
        InetAddress address = InetAddress.getByName(args[0]);
        int tcpPort = Integer.parseInt(args[1]);
        int basePort = Integer.parseInt(args[2]);
        int streams = Integer.parseInt(args[3]);
        long perStream = Long.parseLong(args[4]);
        long seed = Long.parseLong(args[5]);
        int maxSize = Integer.parseInt(args[6]);
        InetAddress source = InetAddress.getByName(args[7]);
        int sourceBasePort = Integer.parseInt(args[8]);
        CountDownLatch done = new CountDownLatch(streams);
        CountDownLatch stdinClosed = new CountDownLatch(1);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        StreamChecker[] checkers = new StreamChecker[streams];
        long[] foreign = new long[streams];
        try (RdsStack stack = RdsStack.create(RdsStackConfig.builder().name("soak-receiver").address(address)
                .tcpPort(tcpPort).defaultTransport("tcp").paths(8).build())) {
            RdsSocket[] sockets = new RdsSocket[streams];
            for (int i = 0; i < streams; i++) {
                sockets[i] = stack.openSocket();
                sockets[i].setOption(RdsSocketOptions.SO_RCVBUF, 1 << 20);
                sockets[i].setOption(RdsSocketOptions.SO_RCVTIMEO, Duration.ofMillis(200));
                sockets[i].bind(new InetSocketAddress(address, basePort + i));
                checkers[i] = new StreamChecker(seed, i, maxSize, perStream);
            }
            Thread watchdog = new Thread(() -> {
                try {
                    while (System.in.read() >= 0) {
                        // drain until the parent closes our stdin or dies
                    }
                } catch (Exception ignored) {
                    // the parent is gone either way
                }
                stdinClosed.countDown();
            }, "stdin-watchdog");
            watchdog.setDaemon(true);
            watchdog.start();
            Thread[] readers = new Thread[streams];
            for (int i = 0; i < streams; i++) {
                int stream = i;
                InetSocketAddress expected = new InetSocketAddress(source, sourceBasePort + i);
                readers[i] = new Thread(() -> {
                    StreamChecker c = checkers[stream];
                    // The allocation-free receive, as ./rds4j recv uses: what the heap holds is then the stack's.
                    ByteBuffer buf = ByteBuffer.allocate(maxSize);
                    RdsMessageInfo info = new RdsMessageInfo();
                    boolean complete = false;
                    try {
                        while (stdinClosed.getCount() > 0) {
                            try {
                                sockets[stream].receive(buf.clear(), info, 0);
                            } catch (EtimedoutException e) {
                                continue;                   // 200 ms without a message: look at standard input
                            }
                            if (!expected.equals(info.source())) {
                                foreign[stream]++;
                                continue;
                            }
                            c.accept(buf.flip());
                            if (!complete && c.expected() >= perStream && c.hasFirst(perStream)) {
                                complete = true;
                                done.countDown();
                            }
                        }
                    } catch (Throwable t) {
                        failure.compareAndSet(null, t);
                        done.countDown();
                    }
                }, "soak-reader-" + i);
                readers[i].setDaemon(true);
                readers[i].start();
            }
            System.out.println("READY");
            while (!done.await(5, java.util.concurrent.TimeUnit.SECONDS) && stdinClosed.getCount() > 0) {
                long received = 0;
                for (StreamChecker c : checkers) {
                    received += c.received();
                }
                System.out.println("PROGRESS " + received + " messages; off-heap " + stack.info().memory());
            }
            // A late duplicate would still show: wait a little after the last stream completed.
            stdinClosed.await(500, java.util.concurrent.TimeUnit.MILLISECONDS);
            StringBuilder line = new StringBuilder("DONE");
            for (int i = 0; i < streams; i++) {
                StreamChecker c = checkers[i];
                line.append(String.format(" stream%d[received=%d lost=%d duplicates=%d outOfOrder=%d corrupt=%d"
                                + " foreign=%d first=%s]", i, c.received(), c.lost(perStream), c.duplicates(),
                        c.outOfOrder(), c.corrupt(), foreign[i], c.firstAnomaly()));
            }
            line.append(" failure=").append(failure.get());
            line.append(" memory=").append(stack.info().memory());
            line.append(" counters=").append(Chaos.counters(stack.counters()));
            System.out.println(line);
            stdinClosed.await();
        }
    }
}
