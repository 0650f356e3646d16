package org.rds4j.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.rds4j.RdsDatagram;
import org.rds4j.RdsSocket;
import org.rds4j.RdsSocketOptions;
import org.rds4j.RdsStack;
import org.rds4j.RdsStackConfig;

/** RDS over TCP between two JVMs: this one on 127.0.0.1 and an echoing peer process on 127.0.0.2. */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class TwoJvmTest {
    private static final InetAddress LOCAL = address("127.0.0.1");
    private static final InetAddress PEER = address("127.0.0.2");
    private static Process peer;
    private static RdsStack stack;
    private static InetSocketAddress echo;

    @BeforeAll
    static void startPeer() throws Exception {
        int tcpPort = TcpHosts.freePort();
        String java = System.getProperty("java.home") + File.separator + "bin" + File.separator + "java";
        peer = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"),
                "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", EchoPeerMain.class.getName(),
                PEER.getHostAddress(), String.valueOf(tcpPort), "4000")
                .redirectErrorStream(true).start();
        BufferedReader out = new BufferedReader(new InputStreamReader(peer.getInputStream(), StandardCharsets.UTF_8));
        String ready = CompletableFuture.supplyAsync(() -> {
            try {
                String line;
                while ((line = out.readLine()) != null) {
                    if (line.startsWith("READY")) {
                        return line;
                    }
                }
                return "peer exited before READY";
            } catch (Exception e) {
                return e.toString();
            }
        }).get(60, TimeUnit.SECONDS);
        assertTrue(ready.startsWith("READY"), ready);
        // keep draining the peer's output so it can never block on a full pipe
        Thread drain = new Thread(() -> out.lines().forEach(l -> System.out.println("[peer] " + l)), "peer-out");
        drain.setDaemon(true);
        drain.start();
        stack = RdsStack.create(RdsStackConfig.builder().name("local").address(LOCAL).tcpPort(tcpPort)
                .defaultTransport("tcp").build());
        echo = new InetSocketAddress(PEER, 4000);
    }

    @AfterAll
    static void stopPeer() throws Exception {
        if (stack != null) {
            stack.close();
        }
        if (peer != null) {
            peer.getOutputStream().close();          // the peer exits when its stdin closes
            if (!peer.waitFor(10, TimeUnit.SECONDS)) {
                peer.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        }
    }

    @Test
    void everySizeCrossesToTheOtherJvmAndBack() throws Exception {
        try (RdsSocket s = stack.openSocket()) {
            s.setOption(RdsSocketOptions.SO_SNDBUF, 1 << 20);
            s.setOption(RdsSocketOptions.SO_RCVBUF, 1 << 20);
            s.bind(new InetSocketAddress(LOCAL, 0));
            for (int size : new int[] {0, 1, 100, 4096, 65536, 1 << 20}) {
                byte[] sent = new byte[size];
                new SplittableRandom(size).nextBytes(sent);
                s.send(ByteBuffer.wrap(sent), echo);
                RdsDatagram d = s.receive(Duration.ofSeconds(30)).orElseThrow();
                assertEquals(echo, d.source());
                byte[] got = new byte[d.length()];
                d.payload().get(got);
                assertArrayEquals(sent, got, "echo of " + size + " bytes");
            }
        }
    }

    @Test
    void hundredThousandMessagesFromFourSocketsComeBackCompleteAndInOrder() throws Exception {
        int sockets = 4;
        int perSocket = 25_000;
        ExecutorService pool = Executors.newFixedThreadPool(2 * sockets);
        List<RdsSocket> open = new ArrayList<>();
        try {
            List<Future<Long>> results = new ArrayList<>();
            for (int i = 0; i < sockets; i++) {
                RdsSocket s = stack.openSocket();
                open.add(s);
                s.bind(new InetSocketAddress(LOCAL, 7000 + i));
                pool.submit(() -> {
                    ByteBuffer b = ByteBuffer.allocate(32);
                    for (long k = 0; k < perSocket; k++) {
                        b.clear();
                        b.putLong(k).putLong(~k).flip();
                        s.send(b, echo);
                    }
                    return null;
                });
                results.add(pool.submit(() -> {
                    Map<InetSocketAddress, Long> next = new HashMap<>();
                    for (int n = 0; n < perSocket; n++) {
                        RdsDatagram d = s.receive(Duration.ofSeconds(60)).orElseThrow(
                                () -> new AssertionError("timed out waiting for an echo"));
                        long k = d.payload().getLong(0);
                        assertEquals(~k, d.payload().getLong(8), "corrupt echo");
                        assertEquals(next.getOrDefault(d.source(), 0L), k, "echo out of order");
                        next.put(d.source(), k + 1);
                    }
                    return next.get(echo);
                }));
            }
            for (Future<Long> f : results) {
                assertEquals(perSocket, f.get(150, TimeUnit.SECONDS));
            }
        } finally {
            pool.shutdownNow();
            open.forEach(RdsSocket::close);
        }
    }

    private static InetAddress address(String s) {
        try {
            return InetAddress.getByName(s);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
