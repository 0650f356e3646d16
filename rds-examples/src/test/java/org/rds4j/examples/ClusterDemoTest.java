package org.rds4j.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintStream;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.rds4j.RdsStack;
import org.rds4j.RdsStackConfig;

/**
 * The example cluster, three nodes, once over the in-JVM loopback transport (any addresses, no sockets: how an
 * application unit-tests its RDS code) and once over real TCP on 127.0.0.1 to 127.0.0.3.
 */
@Timeout(180)
class ClusterDemoTest {
    private final List<RdsStack> stacks = new ArrayList<>();

    @AfterEach
    void closeStacks() {
        stacks.forEach(RdsStack::close);
        Set<String> left = Thread.getAllStackTraces().keySet().stream().filter(Thread::isAlive)
                .map(Thread::getName).filter(n -> n.startsWith("cluster-node-")).collect(Collectors.toSet());
        assertEquals(Set.of(), left, "every node thread ends when its node is closed");
    }

    @Test
    void overLoopback() throws Exception {
        for (int i = 1; i <= 3; i++) {
            stacks.add(RdsStack.create(RdsStackConfig.builder().name("loop" + i)
                    .address(InetAddress.getByName("10.77.0." + i)).defaultTransport("loopback").build()));
        }
        check(ClusterDemo.run(stacks, ClusterDemo.defaultSettings(), log()));
    }

    @Test
    void overTcp() throws Exception {
        int tcpPort = ClusterDemo.freeTcpPort();
        for (int i = 1; i <= 3; i++) {
            stacks.add(RdsStack.create(RdsStackConfig.builder().name("tcp" + i)
                    .address(InetAddress.getByName("127.0.0." + i)).tcpPort(tcpPort).defaultTransport("tcp")
                    .build()));
        }
        check(ClusterDemo.run(stacks, ClusterDemo.defaultSettings(), log()));
    }

    private void check(ClusterDemo.Result r) {
        int perPeer = ClusterDemo.defaultSettings().messagesPerPeer();
        long enobufs = 0;
        long updates = 0;
        for (int i = 0; i < 3; i++) {
            ClusterNode.Stats s = r.nodes().get(i);
            Map<String, Long> c = r.counters().get(i);
            assertEquals(2L * perPeer, s.sent(), "node " + i + ": " + s);
            assertEquals(2L * perPeer, s.received(), "node " + i + ": every message, once, in order: " + s);
            assertEquals(0, s.problems(), "node " + i + ": " + s);
            assertTrue(c.get("cong_send_error") >= s.enobufs(), "every ENOBUFS is counted: " + c);
            assertTrue(c.get("send_queued") >= s.sent(), c.toString());
            // No connection that carried messages was reset. With 8 paths a lane can be refused at startup (the
            // acceptor had not read our probe yet) and counts a reset: nothing was on it to resend.
            assertEquals(0L, c.get("send_retransmitted"), c.toString());
            if (i < 2) {
                enobufs += s.enobufs();
                updates += s.congestionUpdates();
            }
        }
        assertTrue(enobufs >= 1, "the senders ran into the slow node's congestion: " + r.nodes());
        assertTrue(updates >= 1, "and were told when it changed: " + r.nodes());
        assertTrue(r.counters().get(2).get("cong_update_queued") >= 2, "congested, then clear: " + r.counters());
    }

    /** The summary goes to the test's output file (target/surefire-reports). */
    private static PrintStream log() {
        return new PrintStream(System.out, true, StandardCharsets.UTF_8);
    }

}
