package org.rds4j.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.rds4j.EagainException;
import org.rds4j.EmsgsizeException;
import org.rds4j.EtimedoutException;
import org.rds4j.RdsDatagram;
import org.rds4j.RdsMessageInfo;
import org.rds4j.RdsSelector;
import org.rds4j.RdsSocket;
import org.rds4j.RdsSocketOptions;
import org.rds4j.RdsStack;
import org.rds4j.RdsStackConfig;

/**
 * The claims and examples of docs/buffers-and-congestion.md that the other tests do not already show, checked
 * against the implementation: two stacks in this JVM over TCP, and a third address where no host listens.
 */
@Timeout(120)
class BuffersGuideTest {
    private RdsStack hostA;
    private RdsStack hostB;
    private final List<RdsSocket> sockets = new ArrayList<>();

    @BeforeEach
    void startHosts() throws Exception {
        int tcpPort = ToolProcess.freeTcpPort();
        hostA = RdsStack.create(RdsStackConfig.builder().name("a").address(InetAddress.getByName("127.0.0.1"))
                .tcpPort(tcpPort).build());
        hostB = RdsStack.create(RdsStackConfig.builder().name("b").address(InetAddress.getByName("127.0.0.2"))
                .tcpPort(tcpPort).build());
    }

    @AfterEach
    void stopHosts() {
        sockets.forEach(RdsSocket::close);
        hostA.close();
        hostB.close();
    }

    private RdsSocket socket(RdsStack stack, String address, int port) throws Exception {
        RdsSocket s = stack.openSocket();
        sockets.add(s);
        s.bind(new InetSocketAddress(address, port));
        return s;
    }

    @Test
    void sendBufferArithmetic() throws Exception {
        RdsSocket s = hostA.openSocket();
        sockets.add(s);
        assertEquals(212_992, s.getOption(RdsSocketOptions.SO_SNDBUF));
        assertEquals(212_992, s.getOption(RdsSocketOptions.SO_RCVBUF));
        s.setOption(RdsSocketOptions.SO_SNDBUF, 50_000);
        assertEquals(100_000, s.getOption(RdsSocketOptions.SO_SNDBUF));
        s.setOption(RdsSocketOptions.SO_SNDBUF, 1000);
        assertEquals(4608, s.getOption(RdsSocketOptions.SO_SNDBUF), "Linux's floor");
        s.setOption(RdsSocketOptions.SO_RCVBUF, 1000);
        assertEquals(2304, s.getOption(RdsSocketOptions.SO_RCVBUF));
        s.setOption(RdsSocketOptions.SO_SNDBUF, Integer.MAX_VALUE);
        assertEquals(2 * 16 * 1024 * 1024, s.getOption(RdsSocketOptions.SO_SNDBUF), "capped at 16 MiB, doubled");
    }

    @Test
    void fullSendBufferEagainEtimedoutEmsgsizeAndCancel() throws Exception {
        RdsSocket a = socket(hostA, "127.0.0.1", 4000);
        a.setOption(RdsSocketOptions.SO_SNDBUF, 50_000);                // budget: 50000 payload bytes
        a.setOption(RdsSocketOptions.RDS_RECVERR, true);
        InetSocketAddress nowhere = new InetSocketAddress("127.0.0.9", 4000);   // no RDS host there
        assertThrows(EmsgsizeException.class, () -> a.send(ByteBuffer.allocate(50_001), nowhere));
        a.configureBlocking(false);
        ByteBuffer chunk = ByteBuffer.allocate(20_000);
        a.send(chunk.clear(), nowhere);
        a.send(chunk.clear(), nowhere);
        assertTrue(a.isWritable());
        a.send(chunk.clear(), nowhere);                                  // 40000 < 50000: accepted, overshoots
        assertEquals(60_000, a.getOption(RdsSocketOptions.RDS_SEND_QUEUED));
        assertFalse(a.isWritable());
        assertThrows(EagainException.class, () -> a.send(chunk.clear(), nowhere));
        a.configureBlocking(true);
        a.setOption(RdsSocketOptions.SO_SNDTIMEO, Duration.ofMillis(100));
        assertThrows(EtimedoutException.class, () -> a.send(chunk.clear(), nowhere));
        assertFalse(a.awaitSent(Duration.ofMillis(50)));

        a.cancelSentTo(nowhere);
        assertEquals(0, a.getOption(RdsSocketOptions.RDS_SEND_QUEUED));
        assertTrue(a.isWritable());
        for (int i = 0; i < 3; i++) {
            RdsDatagram d = a.receive(Duration.ofSeconds(10)).orElseThrow();
            assertEquals(RdsDatagram.Kind.SEND_FAILED, d.kind());
            assertEquals(RdsDatagram.Failure.CANCELLED, d.failure());
            assertEquals(nowhere, d.source());
            assertEquals(20_000, d.length());
        }
        assertTrue(a.receive(Duration.ZERO).isEmpty());
        assertTrue(a.awaitSent(Duration.ZERO));
    }

    @Test
    void receiveIntoABufferPeekTruncateDontwait() throws Exception {
        RdsSocket a = socket(hostA, "127.0.0.1", 4000);
        RdsSocket b = socket(hostB, "127.0.0.2", 4000);
        ByteBuffer dst = ByteBuffer.allocate(4);
        RdsMessageInfo info = new RdsMessageInfo();
        assertThrows(EagainException.class, () -> b.receive(dst, info, RdsSocket.MSG_DONTWAIT));

        a.send(ByteBuffer.wrap("hello, world".getBytes()), b.localAddress());
        try (RdsSelector selector = RdsSelector.open(hostB)) {
            selector.register(b, RdsSelector.OP_READ);
            int[] ready = {0};
            while (ready[0] == 0) {
                selector.select(Duration.ofSeconds(10), (s, ops) -> ready[0] = ops);
            }
            assertEquals(RdsSelector.OP_READ, ready[0]);
        }
        assertTrue(b.isReadable());
        assertEquals(4, b.receive(dst, info, RdsSocket.MSG_PEEK));
        assertTrue(info.truncated());
        assertEquals(12, info.length());
        assertEquals(a.localAddress(), info.source());
        assertTrue(b.isReadable(), "peek leaves it queued");
        dst.clear();
        assertEquals(4, b.receive(dst, info, 0));                        // truncated: the rest is discarded
        assertEquals("hell", new String(dst.array(), 0, 4));
        assertTrue(info.truncated());
        assertTrue(info.arrivalNanos() <= System.nanoTime());
        assertFalse(b.isReadable());
        b.configureBlocking(false);
        assertThrows(EagainException.class, b::receive);
        assertTrue(b.receive(Duration.ofMillis(10)).isEmpty());
    }
}
