package org.rds4j.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.rds4j.RdsPathInfo;
import org.rds4j.RdsSocket;
import org.rds4j.RdsStack;
import org.rds4j.RdsStackConfig;
import org.rds4j.RdsStackInfo;

/**
 * {@code rds4j info}: against a real second JVM by its pid (the attach API and JMX, as a user runs it), and against
 * this JVM's own platform MBean server for what needs stacks the test controls (IPv6, every source's layout).
 */
@Timeout(value = 240, unit = TimeUnit.SECONDS)
class InfoCommandTest {
    private static final Duration STARTUP = Duration.ofSeconds(60);

    private final List<AutoCloseable> closeables = new ArrayList<>();
    private final ByteArrayOutputStream outBytes = new ByteArrayOutputStream();
    private final ByteArrayOutputStream errBytes = new ByteArrayOutputStream();

    @AfterEach
    void closeAll() throws Exception {
        for (int i = closeables.size() - 1; i >= 0; i--) {
            closeables.get(i).close();
        }
    }

    private int run(String... argv) {
        outBytes.reset();
        errBytes.reset();
        return Main.run(argv, new PrintStream(outBytes, true, StandardCharsets.UTF_8),
                new PrintStream(errBytes, true, StandardCharsets.UTF_8));
    }

    private String out() {
        return outBytes.toString(StandardCharsets.UTF_8);
    }

    /**
     * What {@code info --pid} must show: of a running {@code rds4j recv} shows its connection up, and its next
     * RX sequence number moves while a {@code rds4j send} in a third JVM sends to it.
     */
    @Test
    void infoByPidShowsARecvProcessConnectionUpWithSequenceNumbersMoving() throws Exception {
        String tcpPort = Integer.toString(ToolProcess.freeTcpPort());
        ToolProcess recv = ToolProcess.start("recv", "--bind", "127.0.0.2:4000", "--count", "1000000000",
                "--timeout", "200", "--tcp-port", tcpPort);
        closeables.add(recv);
        recv.awaitLine(l -> l.startsWith("recv: listening on 127.0.0.2:4000"), STARTUP);
        ToolProcess send = ToolProcess.start("send", "--bind", "127.0.0.1:4001", "--to", "127.0.0.2:4000",
                "--count", "1000000000", "--size", "100", "--timeout", "200", "--tcp-port", tcpPort);
        closeables.add(send);

        String pid = Long.toString(recv.pid());
        long first = awaitUpRow(pid, -1);
        long later = awaitUpRow(pid, first);
        assertTrue(later > first, "NextRX moved: " + first + " then " + later);

        // NextRX moves as the path decodes a read, and recv_queued once the read's batch is handed to the socket
        // right after; on a loaded machine a snapshot can fall between the two, so wait (bounded) for the count.
        String all = "";
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        do {
            assertEquals(0, run("info", "--pid", pid), errBytes.toString(StandardCharsets.UTF_8));
            all = out();
        } while (all.lines().noneMatch(l -> l.matches("\\s*recv_queued\\s+[1-9][0-9]*"))
                && System.nanoTime() < deadline && sleepBriefly());
        for (String title : new String[] {"TCP Connections:", "Counters:", "Congestion Maps:", "RDS Sockets:",
                "RDS Connections:", "Receive Message Queue:", "Send Message Queue:", "Retransmit Message Queue:"}) {
            assertTrue(all.contains("\n" + title + "\n"), title + " in\n" + all);
        }
        assertTrue(all.startsWith("rds4j stack recv (org.rds4j:type=Stack,name=recv) of JVM " + pid + ":"), all);
        assertTrue(all.lines().anyMatch(l -> l.matches("\\s*recv_queued\\s+[1-9][0-9]*")), all);
        assertTrue(all.lines().anyMatch(l -> l.matches("\\s*127\\.0\\.0\\.2\\s+4000\\s+.*tcp.*")), all);
        assertTrue(recv.stderr().isEmpty() || !recv.stderr().contains("Exception"), recv.describe());
    }

    private static boolean sleepBriefly() {
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(100));
        return true;
    }

    /** Runs {@code info --pid PID -n} until the row 127.0.0.2 -> 127.0.0.1 is up with NextRX above {@code above}. */
    private long awaitUpRow(String pid, long above) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        String last = "";
        while (System.nanoTime() < deadline) {
            assertEquals(0, run("info", "--pid", pid, "-n"), errBytes.toString(StandardCharsets.UTF_8));
            last = out();
            for (String line : last.lines().toList()) {
                String[] f = line.trim().split("\\s+");
                if (f.length >= 6 && f[0].equals("127.0.0.2") && f[1].equals("127.0.0.1") && f[4].endsWith("C")
                        && f[5].equals("tcp")) {
                    long nextRx = Long.parseLong(f[3]);
                    if (nextRx > above) {
                        return nextRx;
                    }
                }
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(100));
        }
        return fail("no up connection with NextRX above " + above + " within 60 s; last output:\n" + last);
    }

    /**
     * Paths 1 to 7 connect from the smaller address once path 0's probe is answered, on the stack's timer, so they
     * may still be connecting when the messages on path 0 have arrived: waits (bounded) until all eight are up.
     */
    private static void awaitEightPathsUp(RdsStack stack) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        RdsStackInfo info = stack.info();
        while (info.connections().stream().flatMap(c -> c.paths().stream())
                .filter(p -> p.state() == RdsPathInfo.State.UP).count() < 8) {
            if (System.nanoTime() > deadline) {
                fail("the eight paths did not all come up within 30 s: " + info);
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
            info = stack.info();
        }
    }

    /**
     * Two loopback stacks, {@code nameA} at {@code hostA} sending ten 300-byte messages from port 4100 to port 4200 of
     * {@code nameB} at {@code hostB}, which reads five of them; returns once all 8 paths of {@code nameB} are up.
     *
     * @return the receiving stack
     */
    private RdsStack twoStacksWithUnreadMessages(String hostA, String hostB, String nameA, String nameB)
            throws Exception {
        InetAddress addrA = InetAddress.getByName(hostA);
        InetAddress addrB = InetAddress.getByName(hostB);
        RdsStack sa = RdsStack.create(RdsStackConfig.builder().name(nameA).address(addrA)
                .defaultTransport("loopback").build());
        closeables.add(sa);
        RdsStack sb = RdsStack.create(RdsStackConfig.builder().name(nameB).address(addrB)
                .defaultTransport("loopback").build());
        closeables.add(sb);
        RdsSocket tx = sa.openSocket();
        closeables.add(tx);
        tx.bind(new InetSocketAddress(addrA, 4100));
        RdsSocket rx = sb.openSocket();
        closeables.add(rx);
        rx.bind(new InetSocketAddress(addrB, 4200));
        for (int i = 0; i < 10; i++) {
            tx.send(ByteBuffer.allocate(300), rx.localAddress());
        }
        for (int i = 0; i < 5; i++) {
            assertTrue(rx.receive(Duration.ofSeconds(30)).isPresent());
        }
        awaitEightPathsUp(sb);
        return sb;
    }

    /** Every source of this JVM's own stacks, with IPv6 in the short form and the rds-info columns. */
    @Test
    void everySourceOfStacksInThisJvmWithShortIpv6() throws Exception {
        twoStacksWithUnreadMessages("fd00:0:0:0:0:0:0:1", "fd00:0:0:0:0:0:0:2", "info-v6-a", "info-v6-b");

        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8);
        assertEquals(0, InfoCommand.print(ManagementFactory.getPlatformMBeanServer(), "this JVM", "info-v6-b",
                List.of("I", "c", "g", "k", "n", "r", "s", "t"), out, out));
        String text = bytes.toString(StandardCharsets.UTF_8);
        assertTrue(text.startsWith("rds4j stack info-v6-b (org.rds4j:type=Stack,name=info-v6-b) of this JVM:"),
                text);
        assertTrue(text.contains("none: rds4j has no InfiniBand transport"), text);
        assertTrue(!text.contains("0:0:0"), "IPv6 in its short form:\n" + text);
        // one row per path: the stacks offer 8 by default and both use 8
        assertEquals(8, text.lines().filter(l -> l.matches("\\s*fd00::2\\s+fd00::1\\s+\\d+\\s+\\d+\\s+--C"
                + "\\s+loopback\\s+[0-7]\\s+0\\s+8\\s+\\d+")).count(), text);
        assertTrue(text.lines().anyMatch(l -> l.matches("\\s*fd00::2\\s+4200\\s+5\\s+1500")),
                "five unread messages of 300 bytes:\n" + text);
        assertTrue(text.lines().anyMatch(l -> l.matches("\\s*fd00::2\\s+local\\s+-")), text);
        assertTrue(text.lines().anyMatch(l -> l.matches("\\s*recv_queued\\s+10")), text);
        assertTrue(!text.contains("info-v6-a"), "--stack picks one stack:\n" + text);

        assertEquals(1, InfoCommand.print(ManagementFactory.getPlatformMBeanServer(), "this JVM", "no-such-stack",
                List.of("c"), out, out));
    }

    /** {@code --json}: one document a strict reader takes, with the figures the tables print. */
    @Test
    @SuppressWarnings("unchecked")
    void jsonHoldsWhatTheTablesPrint() throws Exception {
        RdsStack sb = twoStacksWithUnreadMessages("127.0.0.61", "127.0.0.62", "info-json-a", "info-json-\"b\"");

        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8);
        assertEquals(0, InfoCommand.print(ManagementFactory.getPlatformMBeanServer(), "this JVM",
                "info-json-\"b\"", List.of("T", "c", "g", "k", "n", "r", "s", "t"), true, out, out));
        String text = bytes.toString(StandardCharsets.UTF_8);
        assertEquals(1, text.lines().count(), "one line: " + text);
        java.util.Map<String, Object> doc = (java.util.Map<String, Object>) JsonTestParser.parse(text);
        assertEquals(RdsStack.version(), doc.get("rds4jVersion"));
        List<Object> stacks = (List<Object>) doc.get("stacks");
        assertEquals(1, stacks.size(), text);
        java.util.Map<String, Object> s = (java.util.Map<String, Object>) stacks.get(0);
        assertEquals("info-json-\"b\"", s.get("name"), "a quote in a name survives");
        java.util.Map<String, Object> counters = (java.util.Map<String, Object>) s.get("counters");
        assertEquals(new java.math.BigDecimal(10), counters.get("recv_queued"), text);
        assertEquals(sb.counters().keySet(), counters.keySet(), "every counter, as the table prints");
        List<Object> paths = (List<Object>) s.get("paths");
        assertEquals(8, paths.size(), text);
        for (Object o : paths) {
            java.util.Map<String, Object> p = (java.util.Map<String, Object>) o;
            assertEquals("127.0.0.62", p.get("local"));
            assertEquals("127.0.0.61", p.get("peer"));
            assertEquals("UP", p.get("state"));
            assertTrue(p.get("nextRxSequence") instanceof java.math.BigDecimal, text);
        }
        List<Object> sockets = (List<Object>) s.get("sockets");
        java.util.Map<String, Object> sock = (java.util.Map<String, Object>) sockets.get(0);
        assertEquals(new java.math.BigDecimal(4200), sock.get("boundPort"));
        assertEquals(new java.math.BigDecimal(5), sock.get("receiveQueuedMessages"));
        assertEquals(new java.math.BigDecimal(1500), sock.get("receiveQueuedBytes"));
        assertTrue(s.get("congestionMaps") instanceof List, text);

        bytes.reset();
        assertEquals(0, InfoCommand.print(ManagementFactory.getPlatformMBeanServer(), "this JVM",
                "info-json-\"b\"", List.of("c"), true, out, out));
        java.util.Map<String, Object> only = (java.util.Map<String, Object>) ((List<Object>) ((java.util.Map<String,
                Object>) JsonTestParser.parse(bytes.toString(StandardCharsets.UTF_8))).get("stacks")).get(0);
        assertTrue(only.containsKey("counters") && !only.containsKey("paths") && !only.containsKey("sockets"),
                "-c alone: counters only: " + only.keySet());
    }
}
