package org.rds4j.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.rds4j.RdsSocket;
import org.rds4j.RdsStack;
import org.rds4j.RdsStackConfig;

/**
 * What an idle peer connection costs: stack A (127.0.0.1) sends one message to each of 1,000 sockets of stack B, one
 * on each of 1,000 addresses (127.1.x.y), so A ends up with 1,000 connections (and B with 1,000 accepted ones), then
 * everything goes idle. The retained heap after a full GC, compared with the same two stacks before any connection,
 * is what 1,000 connections cost at both ends: per connection pair it must stay under 2 x 64 KiB (a bound
 * of 64 KiB per connection, for each end). The figure is printed; it is a measurement, not a timing.
 */
class IdleConnectionsHeapTest {
    private static final int PEERS = 1000;
    private static final long BOUND_PER_END = 64 * 1024;

    private final List<AutoCloseable> opened = new ArrayList<>();

    @AfterEach
    void close() throws Exception {
        for (int i = opened.size() - 1; i >= 0; i--) {
            opened.get(i).close();
        }
        LeakRecorder.assertNoLeaks();
    }

    @Test
    @Timeout(180)
    void aThousandIdleConnectionsCostLessThan64KiBOfHeapEach() throws Exception {
        int tcpPort = TcpHosts.freePort();
        InetAddress a = InetAddress.getByName("127.0.0.1");
        List<InetAddress> peers = new ArrayList<>();
        RdsStackConfig.Builder bConfig = RdsStackConfig.builder().name("idle-b").tcpPort(tcpPort)
                .defaultTransport("tcp").paths(8);
        for (int i = 0; i < PEERS; i++) {
            InetAddress p = InetAddress.getByAddress(new byte[] {127, 1, (byte) (i >> 8), (byte) (1 + (i & 0xFF))});
            peers.add(p);
            bConfig.address(p);
        }
        RdsStack stackA = open(RdsStack.create(RdsStackConfig.builder().name("idle-a").address(a).tcpPort(tcpPort)
                .defaultTransport("tcp").paths(8).build()));
        RdsStack stackB = open(RdsStack.create(bConfig.build()));
        RdsSocket tx = open(stackA.openSocket());
        tx.bind(new InetSocketAddress(a, 0));
        List<RdsSocket> receivers = new ArrayList<>();
        for (InetAddress p : peers) {
            RdsSocket r = open(stackB.openSocket());
            r.bind(new InetSocketAddress(p, 4000));             // B listens on each of its addresses
            receivers.add(r);
        }

        long before = retainedHeap();
        ByteBuffer one = ByteBuffer.allocate(16);
        for (RdsSocket r : receivers) {
            tx.send(one.clear(), r.localAddress());
        }
        for (RdsSocket r : receivers) {
            assertEquals(16, r.receive(Duration.ofSeconds(60)).orElseThrow().length());
        }
        assertTrue(tx.awaitSent(Duration.ofSeconds(60)), "every message acknowledged: the connections are idle");
        long after = retainedHeap();

        long perPair = (after - before) / PEERS;
        System.out.printf("%d idle connections: %d bytes of heap per connection pair (both ends), %d per end%n",
                PEERS, perPair, perPair / 2);
        assertTrue(perPair <= 2 * BOUND_PER_END, perPair + " bytes per connection pair, bound " + 2 * BOUND_PER_END);
    }

    private <T extends AutoCloseable> T open(T c) {
        opened.add(c);
        return c;
    }

    /** Heap in use after full collections, the least of a few readings (a collection may run late). */
    private static long retainedHeap() {
        Runtime rt = Runtime.getRuntime();
        long least = Long.MAX_VALUE;
        for (int i = 0; i < 5; i++) {
            System.gc();
            least = Math.min(least, rt.totalMemory() - rt.freeMemory());
        }
        return least;
    }
}
