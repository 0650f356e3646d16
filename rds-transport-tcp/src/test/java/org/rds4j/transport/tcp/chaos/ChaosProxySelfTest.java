package org.rds4j.transport.tcp.chaos;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.SplittableRandom;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The fault injector must itself be right before its verdicts on rds4j mean anything: with plain sockets on both
 * ends (an echo server on 127.0.0.2), it forwards every byte from A's address, resets with RST, stalls without
 * closing, and refuses.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class ChaosProxySelfTest {
    private ServerSocket echo;
    private ChaosProxy proxy;
    private final BlockingQueue<Socket> served = new LinkedBlockingQueue<>();
    private Thread acceptor;

    @BeforeEach
    void startEcho() throws Exception {
        long seed = Chaos.seed("ChaosProxySelfTest");
        echo = new ServerSocket(0, 16, Chaos.B);
        acceptor = new Thread(() -> {
            while (!echo.isClosed()) {
                try {
                    Socket s = echo.accept();
                    served.add(s);
                    Thread t = new Thread(() -> echoAll(s), "echo");
                    t.setDaemon(true);
                    t.start();
                } catch (IOException closed) {
                    return;
                }
            }
        }, "echo-accept");
        acceptor.setDaemon(true);
        acceptor.start();
        int proxyPort = Chaos.freePort(echo.getLocalPort());
        proxy = new ChaosProxy(Chaos.at(Chaos.B, proxyPort), Chaos.at(Chaos.B, echo.getLocalPort()), Chaos.A, seed);
    }

    @AfterEach
    void stop() throws Exception {
        proxy.close();
        echo.close();
        for (Socket s : served) {
            s.close();
        }
        acceptor.join(5_000);
    }

    @Test
    void forwardsEveryByteBothWaysFromAsAddress() throws Exception {
        try (Socket c = connect()) {
            byte[] data = new byte[3 << 20];
            new SplittableRandom(1).nextBytes(data);
            Thread writer = new Thread(() -> {
                try {
                    c.getOutputStream().write(data);
                } catch (IOException e) {
                    throw new IllegalStateException(e);
                }
            }, "writer");
            writer.start();
            byte[] back = new byte[data.length];
            new DataInputStream(c.getInputStream()).readFully(back);
            writer.join(10_000);
            assertArrayEquals(data, back);
            Socket server = served.poll(5, TimeUnit.SECONDS);
            assertEquals(Chaos.A, ((InetSocketAddress) server.getRemoteSocketAddress()).getAddress(),
                    "B must see the connection coming from A's address");
            assertEquals(2L * data.length, proxy.bytes.get(0) + proxy.bytes.get(1));
        }
    }

    @Test
    void resetAbortsBothSidesWithRst() throws Exception {
        try (Socket c = connect()) {
            proxy.resetSoon();
            // Keep bytes flowing until the armed reset cuts them.
            IOException seen = assertThrows(IOException.class, () -> {
                OutputStream out = c.getOutputStream();
                InputStream in = c.getInputStream();
                byte[] chunk = new byte[4096];
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                while (System.nanoTime() < deadline) {
                    out.write(chunk);
                    if (in.readNBytes(chunk.length).length < chunk.length) {
                        throw new IOException("end of stream, not a reset");
                    }
                }
            });
            assertTrue(seen.getMessage().toLowerCase().contains("reset") || seen.getMessage().contains("Broken pipe"),
                    "expected a reset, got " + seen);
            assertEquals(1, proxy.resetsDone(), proxy.stats());
            assertTrue(proxy.links().get(0).closeReason().startsWith("reset at byte"), proxy.links().toString());
        }
    }

    @Test
    void stallHoldsBytesWithoutClosing() throws Exception {
        try (Socket c = connect()) {
            c.getOutputStream().write(1);
            assertEquals(1, c.getInputStream().read());
            long start = System.nanoTime();
            proxy.stall(Duration.ofMillis(800));
            c.getOutputStream().write(2);
            c.setSoTimeout(300);
            assertThrows(SocketTimeoutException.class, () -> c.getInputStream().read(), "nothing passes a stall");
            c.setSoTimeout(5_000);
            assertEquals(2, c.getInputStream().read(), "the byte passes once the stall ends");
            assertTrue(System.nanoTime() - start >= TimeUnit.MILLISECONDS.toNanos(800));
            assertEquals(1, proxy.links().size(), "the same connection, never closed");
        }
    }

    @Test
    void refuseResetsNewConnections() throws Exception {
        proxy.refuse(Duration.ofSeconds(5));
        // The reset may already hit connect() itself, or only the first write or read: any of them must fail.
        assertThrows(IOException.class, () -> {
            try (Socket c = connect()) {
                c.setSoTimeout(5_000);
                c.getOutputStream().write(new byte[1]);
                if (c.getInputStream().read() < 0) {
                    throw new IOException("closed");
                }
            }
        });
        assertTrue(proxy.await(() -> proxy.refused.get() == 1, Duration.ofSeconds(5)), proxy.stats());
        assertEquals(0, proxy.accepted.get());
    }

    private Socket connect() throws IOException {
        Socket c = new Socket();
        c.bind(new InetSocketAddress(Chaos.A, 0));
        c.connect(proxyAddress(), 5_000);
        return c;
    }

    private InetSocketAddress proxyAddress() {
        return proxy.listenAddress();
    }

    private static void echoAll(Socket s) {
        try (s) {
            s.getInputStream().transferTo(s.getOutputStream());
        } catch (IOException ignored) {
            // reset by the proxy: expected in the reset test
        }
    }
}
