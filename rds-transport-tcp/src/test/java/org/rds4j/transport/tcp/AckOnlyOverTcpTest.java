package org.rds4j.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.rds4j.RdsConnectionInfo;
import org.rds4j.RdsMessageInfo;
import org.rds4j.RdsPathInfo;
import org.rds4j.RdsSocket;
import org.rds4j.RdsStack;
import org.rds4j.RdsStackConfig;

/**
 * A message nobody replies to is still acknowledged over real TCP, however the I/O threads wait: the ack-only message
 * that waited for a reply goes at its deadline (threads that yield before they sleep, or busy-poll, keep deadlines),
 * or at once (threads that sleep at once keep none), and the sender's message is released.
 */
@Timeout(60)
class AckOnlyOverTcpTest {
    private final List<AutoCloseable> opened = new ArrayList<>();

    @AfterEach
    void close() throws Exception {
        for (int i = opened.size() - 1; i >= 0; i--) {
            opened.get(i).close();
        }
        LeakRecorder.assertNoLeaks();
    }

    @ParameterizedTest
    @ValueSource(strings = {"yielding", "busy-poll", "sleeping"})
    void aMessageNobodyRepliesToIsAcknowledged(String waiting) throws Exception {
        UnaryOperator<RdsStackConfig.Builder> how = switch (waiting) {
            case "busy-poll" -> b -> b.busyPoll(true);
            case "sleeping" -> b -> b.property("tcp.yieldMicros", "0");
            default -> b -> b;
        };
        int port = TcpHosts.freePort();
        InetAddress hostA = InetAddress.getByName("127.0.0.1");
        InetAddress hostB = InetAddress.getByName("127.0.0.2");
        RdsStack sa = keep(RdsStack.create(how.apply(RdsStackConfig.builder().name("ack-a").address(hostA)
                .tcpPort(port).defaultTransport("tcp")).build()));
        RdsStack sb = keep(RdsStack.create(how.apply(RdsStackConfig.builder().name("ack-b").address(hostB)
                .tcpPort(port).defaultTransport("tcp")).build()));
        RdsSocket a = keep(sa.openSocket());
        RdsSocket b = keep(sb.openSocket());
        a.bind(new InetSocketAddress(hostA, 4000));
        b.bind(new InetSocketAddress(hostB, 5000));

        // The first message makes the connection and teaches each side that the other acknowledges.
        for (int i = 0; i < 3; i++) {
            a.send(ByteBuffer.wrap(new byte[] {(byte) i}), new InetSocketAddress(hostB, 5000));
            ByteBuffer in = ByteBuffer.allocate(16);
            assertEquals(1, b.receive(in, new RdsMessageInfo(), 0));
            RawPeer.await(() -> unacked(sa) == 0, Duration.ofSeconds(20),
                    () -> "message " + " was acknowledged; A's paths: " + paths(sa));
        }
        assertTrue(sb.info().counters().getOrDefault("ack_sent", 0L) >= 1,
                "B acknowledged with ack-only messages: " + sb.info().counters().get("ack_sent"));
    }

    private static int unacked(RdsStack s) {
        int n = 0;
        for (RdsConnectionInfo c : s.info().connections()) {
            for (RdsPathInfo p : c.paths()) {
                n += p.unackedMessages() + p.queuedMessages();
            }
        }
        return n;
    }

    private static String paths(RdsStack s) {
        return s.info().connections().toString();
    }

    private <T extends AutoCloseable> T keep(T c) {
        opened.add(c);
        return c;
    }
}
