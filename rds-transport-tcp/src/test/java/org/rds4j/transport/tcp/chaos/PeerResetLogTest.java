package org.rds4j.transport.tcp.chaos;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.rds4j.RdsPathInfo;
import org.rds4j.RdsSocket;
import org.rds4j.RdsSocketOptions;
import org.rds4j.RdsStack;
import org.rds4j.RdsStackConfig;
import org.rds4j.RdsStackInfo;

/**
 * A peer whose eight TCP connections are all reset at once (as when its process ends with bytes unread) is logged
 * as one INFO line for the connection, in words, not one per path quoting the transport's exception; the paths
 * reconnect and what was sent arrives.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class PeerResetLogTest {
    @Test
    void eightPathsResetAtOnceLogOneInfoLineInWords() throws Exception {
        long seed = Chaos.seed("PeerResetLogTest");
        int port = Chaos.freePort(-1);
        int proxyPort = Chaos.freePort(port);
        PrintStream original = System.err;
        ByteArrayOutputStream copy = new ByteArrayOutputStream();
        try (RdsStack a = RdsStack.create(config("reset-log-a", port).address(Chaos.A)
                     .property("tcp.peerPort", String.valueOf(proxyPort)).build());
             RdsStack b = RdsStack.create(config("reset-log-b", port).address(Chaos.B).build());
             ChaosProxy proxy = new ChaosProxy(Chaos.at(Chaos.B, proxyPort), Chaos.at(Chaos.B, port), Chaos.A,
                     seed);
             RdsSocket tx = a.openSocket();
             RdsSocket rx = b.openSocket()) {
            tx.setOption(RdsSocketOptions.SO_SNDTIMEO, Duration.ofSeconds(30));     // never hang the test
            tx.bind(Chaos.at(Chaos.A, 5400));
            rx.bind(Chaos.at(Chaos.B, 6400));
            tx.send(ByteBuffer.allocate(100), rx.localAddress());
            assertTrue(rx.receive(Duration.ofSeconds(30)).isPresent());
            awaitUp(a, 8, "all eight paths up");

            System.setErr(new PrintStream(new OutputStream() {
                @Override
                public void write(int c) {
                    original.write(c);
                    synchronized (copy) {
                        copy.write(c);
                    }
                }
            }, true, StandardCharsets.UTF_8));
            try {
                proxy.resetAllNow();
                awaitLog(copy, "connection lost");
                // A path comes up again only after its own reset was handled: with all eight up, every reset's line
                // has been written.
                awaitUp(a, 8, "all eight paths up again after the resets");
                tx.send(ByteBuffer.allocate(100), rx.localAddress());
                assertTrue(rx.receive(Duration.ofSeconds(30)).isPresent(), "delivery goes on");
            } finally {
                System.setErr(original);
            }
        }
        String log;
        synchronized (copy) {
            log = copy.toString(StandardCharsets.UTF_8);
        }
        List<String> info = log.lines().filter(l -> l.contains(" INFO ")).toList();
        List<String> lost = info.stream().filter(l -> l.contains("127.0.0.1 -> 127.0.0.2")
                && l.contains("connection lost")).toList();
        assertEquals(1, lost.size(), "one INFO line for A's connection, not one per path; seed " + seed + ":\n"
                + log);
        assertTrue(lost.get(0).contains("the peer reset it"), "the cause in words: " + lost.get(0));
        assertTrue(info.stream().noneMatch(l -> l.contains("Exception") || l.contains(" path ")),
                "no exception and no per-path line at INFO; seed " + seed + ":\n" + log);
        assertTrue(info.stream().filter(l -> l.contains("connection lost")).count() <= 2,
                "at most one line for each of the two hosts' connections:\n" + log);
    }

    private static RdsStackConfig.Builder config(String name, int port) {
        return RdsStackConfig.builder().name(name).tcpPort(port).defaultTransport("tcp").paths(8)
                .reconnectDelays(Duration.ofMillis(1), Duration.ofMillis(200));
    }

    private static void awaitLog(ByteArrayOutputStream copy, String text) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (true) {
            synchronized (copy) {
                if (copy.toString(StandardCharsets.UTF_8).contains(text)) {
                    return;
                }
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("no log line with '" + text + "' within 30 s");
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
        }
    }

    private static void awaitUp(RdsStack s, int up, String what) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        RdsStackInfo info = s.info();
        while (info.connections().stream().flatMap(c -> c.paths().stream())
                .filter(p -> p.state() == RdsPathInfo.State.UP).count() != up) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError(what + ": not within 30 s: " + info);
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
            info = s.info();
        }
    }
}
