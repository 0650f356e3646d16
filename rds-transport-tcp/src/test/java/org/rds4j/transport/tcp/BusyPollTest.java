package org.rds4j.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.rds4j.EbadfException;
import org.rds4j.EintrException;
import org.rds4j.EtimedoutException;
import org.rds4j.RdsMessageInfo;
import org.rds4j.RdsSocket;
import org.rds4j.RdsSocketOptions;
import org.rds4j.RdsStack;
import org.rds4j.RdsStackConfig;

/**
 * Busy-poll mode ({@link RdsStackConfig#busyPoll()}) changes how threads wait, never what they see: messages arrive
 * in order, and a spinning receive still ends with its timeout, a close or an interrupt, as a parked one does.
 */
@Timeout(120)
class BusyPollTest {
    /**
     * Four polling threads share two cores on the project's machine; they yield between checks, so a round trip
     * takes about a tenth of a millisecond there (it took 8 ms when the I/O threads spun without yielding).
     */
    private static final int ROUND_TRIPS = 3000;

    private final List<AutoCloseable> opened = new ArrayList<>();
    private RdsSocket a;
    private RdsSocket b;

    @BeforeEach
    void open() throws Exception {
        int port = TcpHosts.freePort();
        InetAddress hostA = InetAddress.getByName("127.0.0.1");
        InetAddress hostB = InetAddress.getByName("127.0.0.2");
        RdsStack sa = keep(RdsStack.create(RdsStackConfig.builder().name("busy-a").address(hostA).tcpPort(port)
                .defaultTransport("tcp").busyPoll(true).build()));
        RdsStack sb = keep(RdsStack.create(RdsStackConfig.builder().name("busy-b").address(hostB).tcpPort(port)
                .defaultTransport("tcp").busyPoll(true).build()));
        assertTrue(sa.config().busyPoll());
        a = keep(sa.openSocket());
        b = keep(sb.openSocket());
        a.bind(new InetSocketAddress(hostA, 0));
        b.bind(new InetSocketAddress(hostB, 0));
    }

    @AfterEach
    void close() throws Exception {
        for (int i = opened.size() - 1; i >= 0; i--) {
            opened.get(i).close();
        }
        LeakRecorder.assertNoLeaks();
    }

    private <T extends AutoCloseable> T keep(T c) {
        opened.add(c);
        return c;
    }

    @Test
    void pingPongKeepsOrderAndContent() throws Exception {
        ByteBuffer out = ByteBuffer.allocateDirect(64);
        ByteBuffer in = ByteBuffer.allocateDirect(64);
        RdsMessageInfo info = new RdsMessageInfo();
        CompletableFuture<Void> echo = CompletableFuture.runAsync(() -> {
            ByteBuffer buf = ByteBuffer.allocateDirect(64);
            RdsMessageInfo i = new RdsMessageInfo();
            try {
                for (int n = 0; n < ROUND_TRIPS; n++) {
                    buf.clear();
                    b.receive(buf, i, 0);
                    buf.flip();
                    b.send(buf, i.source());
                }
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        });
        for (int n = 0; n < ROUND_TRIPS; n++) {
            out.clear();
            out.putInt(0, n);
            a.send(out, b.localAddress());
            in.clear();
            assertEquals(64, a.receive(in, info, 0));
            assertEquals(n, in.getInt(0), "the echo of message " + n);
        }
        echo.get(60, TimeUnit.SECONDS);
    }

    @Test
    void aSpinningReceiveEndsWithItsTimeout() throws Exception {
        a.setOption(RdsSocketOptions.SO_RCVTIMEO, Duration.ofMillis(200));
        long t0 = System.nanoTime();
        assertThrows(EtimedoutException.class, () -> a.receive());
        assertTrue(System.nanoTime() - t0 >= TimeUnit.MILLISECONDS.toNanos(200), "it waited its timeout");
        assertTrue(a.receive(Duration.ofMillis(50)).isEmpty());
    }

    @Test
    void closeEndsASpinningReceive() throws Exception {
        CompletableFuture<Void> waiting = CompletableFuture.runAsync(() -> {
            try {
                a.receive();
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        });
        awaitSpinning();
        a.close();
        ExecutionException e = assertThrows(ExecutionException.class, () -> waiting.get(10, TimeUnit.SECONDS));
        assertTrue(e.getCause().getCause() instanceof EbadfException, e.toString());
    }

    @Test
    void anInterruptEndsASpinningReceiveWithEintr() throws Exception {
        Thread[] receiver = new Thread[1];
        CompletableFuture<Throwable> outcome = new CompletableFuture<>();
        receiver[0] = new Thread(() -> {
            try {
                a.receive();
                outcome.complete(null);
            } catch (Throwable t) {
                outcome.complete(t);
            }
        });
        receiver[0].start();
        awaitSpinning();
        receiver[0].interrupt();
        assertTrue(outcome.get(10, TimeUnit.SECONDS) instanceof EintrException);
        receiver[0].join(10_000);
    }

    /** Lets the receiver reach its wait: a receive with a short timeout on the same socket spins there too. */
    private void awaitSpinning() throws Exception {
        assertTrue(a.receive(Duration.ofMillis(100)).isEmpty());
    }
}
