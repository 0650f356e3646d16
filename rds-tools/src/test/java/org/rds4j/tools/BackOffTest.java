package org.rds4j.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.rds4j.RdsDatagram;
import org.rds4j.RdsSelector;
import org.rds4j.RdsSocket;
import org.rds4j.RdsSocketOptions;
import org.rds4j.RdsStack;
import org.rds4j.RdsStackConfig;

/**
 * The new options' parsing, and {@code send --nonblocking}'s back-off against a receiver that does not read, with
 * two stacks (127.0.0.1 and 127.0.0.2) in this JVM over real TCP. The receiver starts reading only once the sender
 * has been refused with ENOBUFS, so congestion is certain rather than a matter of timing.
 */
@Timeout(120)
class BackOffTest {
    private static final int MESSAGES = 300;
    private static final int SIZE = 1000;

    private RdsStack hostA;
    private RdsStack hostB;

    @BeforeEach
    void startHosts() throws Exception {
        int tcpPort = ToolProcess.freeTcpPort();
        hostA = stack("a", "127.0.0.1", tcpPort);
        hostB = stack("b", "127.0.0.2", tcpPort);
    }

    @AfterEach
    void stopHosts() {
        hostA.close();
        hostB.close();
    }

    private static RdsStack stack(String name, String address, int tcpPort) throws Exception {
        return RdsStack.create(RdsStackConfig.builder().name(name).address(InetAddress.getByName(address))
                .tcpPort(tcpPort).build());
    }

    @Test
    void newOptionsParse() throws Exception {
        Args recv = Args.parse(new String[] {"--bind", "127.0.0.2:4000", "--count", "5", "--stall", "2.5",
                "--rcvbuf", "20000"}, new RecvCommand().valueOptions(), new RecvCommand().flagOptions());
        assertEquals(2_500_000_000L, recv.secondsAsNanos("stall", 0, 0, 1e6));
        assertEquals(20000, NetOptions.from(recv).rcvbuf);
        assertEquals(0, NetOptions.from(recv).sndbuf, "not given: the stack's default");

        Args send = Args.parse(new String[] {"--bind", "127.0.0.1:0", "--to", "127.0.0.2:4000", "--nonblocking",
                "--sndbuf=50000"}, new SendCommand().valueOptions(), new SendCommand().flagOptions());
        assertTrue(send.flag("nonblocking"));
        assertEquals(50000, NetOptions.from(send).sndbuf);
        Args plain = Args.parse(new String[] {"--bind", "127.0.0.1:0", "--to", "127.0.0.2:4000"},
                new SendCommand().valueOptions(), new SendCommand().flagOptions());
        assertFalse(plain.flag("nonblocking"));
        assertEquals(0, plain.secondsAsNanos("stall", 0, 0, 1e6));

        assertTrue(new RecvCommand().usage().contains("--stall S"));
        assertTrue(new RecvCommand().usage().contains("--rcvbuf BYTES"));
        assertTrue(new SendCommand().usage().contains("--nonblocking"));
        assertTrue(new SendCommand().usage().contains("--sndbuf BYTES"));
    }

    @Test
    void nonBlockingSenderWaitsForTheCongestionUpdateAndLosesNothing() throws Exception {
        RdsSocket b = hostB.openSocket();
        b.setOption(RdsSocketOptions.SO_RCVBUF, 20000);        // congested above 20000 unread bytes
        b.bind(new InetSocketAddress("127.0.0.2", 4000));
        RdsSocket a = hostA.openSocket();
        a.bind(new InetSocketAddress("127.0.0.1", 4001));
        a.configureBlocking(false);
        a.setOption(RdsSocketOptions.RDS_CONG_MONITOR, true);
        CountDownLatch refused = new CountDownLatch(1);
        try (RdsSelector selector = RdsSelector.open(hostA)) {
            selector.register(a, RdsSelector.OP_WRITE);
            SendCommand.NonBlockingSender sender = new SendCommand.NonBlockingSender(a, selector, null,
                    System.nanoTime() + TimeUnit.SECONDS.toNanos(90)) {
                @Override
                void onEnobufs() {
                    refused.countDown();
                }
            };
            CompletableFuture<Void> sending = CompletableFuture.runAsync(() -> {
                try {
                    ByteBuffer buffer = ByteBuffer.allocate(SIZE);
                    for (long k = 0; k < MESSAGES; k++) {
                        buffer.clear();
                        PayloadPattern.fill(buffer, k, SIZE);
                        buffer.flip();
                        sender.send(buffer, b.localAddress());
                    }
                } catch (Exception e) {
                    throw new AssertionError(e);
                }
            });
            // Nothing is read until the port's congestion has refused a send: 300 KB cannot all fit.
            assertTrue(refused.await(60, TimeUnit.SECONDS), "never refused with ENOBUFS: " + sender.summary());
            StreamVerifier verifier = new StreamVerifier("test", System.err);
            while (verifier.messages() < MESSAGES) {
                RdsDatagram d = b.receive(Duration.ofSeconds(30)).orElseThrow(
                        () -> new AssertionError("stalled after " + verifier.messages() + ": " + sender.summary()));
                assertTrue(verifier.accept(d.source(), d.payload()), "message " + verifier.messages());
            }
            sending.get(60, TimeUnit.SECONDS);
            assertTrue(a.awaitSent(Duration.ofSeconds(30)));
            assertEquals(0, verifier.problems());
            assertTrue(sender.enobufs >= 1, sender.summary());
            assertTrue(hostA.counters().get("cong_send_error") >= sender.enobufs, hostA.counters().toString());
            assertTrue(hostB.counters().get("cong_update_queued") >= 2, "congested, then clear again");
            assertNull(b.receive(Duration.ZERO).orElse(null), "nothing extra");
        } finally {
            a.close();
            b.close();
        }
    }

    @Test
    void blockingSummaryReadsTheStacksCounters() {
        String s = SendCommand.blockingSummary(hostA);
        assertTrue(s.matches("blocking: cong_send_blocked=0 send_queue_full=0"), s);
    }
}
