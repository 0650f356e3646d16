package org.rds4j.interop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.rds4j.EagainException;
import org.rds4j.EnobufsException;
import org.rds4j.RdsDatagram;
import org.rds4j.RdsSelector;
import org.rds4j.RdsSocket;
import org.rds4j.RdsSocketOptions;
import org.rds4j.RdsStack;
import org.rds4j.RdsStackConfig;
import org.rds4j.RdsStackInfo;
import org.rds4j.RdsTlsConfig;
import org.rds4j.core.stack.CoreStack;
import org.rds4j.core.path.Connection;
import org.rds4j.core.testkit.TestTls;
import org.rds4j.tools.PayloadPattern;

/**
 * rds4j against the Linux kernel's RDS over TCP, live. The guest kernel is at 10.213.0.2; rds4j runs in this JVM
 * as 10.213.0.1 (the smaller address) or 10.213.0.9 (the larger). Every scenario uses fresh stacks and its own RDS
 * ports, asserts what arrived byte for byte and in order, and ends by checking that the guest kernel logged no RDS
 * complaint.
 *
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@ExtendWith({ScenarioReport.class, GuestBreakdown.class})
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class KernelInteropTest {
    private static final int[] SIZES = {0, 1, 100, 4096, 65536, 1 << 20};
    private static InetAddress low;
    private static InetAddress high;
    private static InetAddress guest;
    private static int dmesgLines;

    private final List<RdsStack> stacks = new ArrayList<>();

    @BeforeAll
    static void guestIsThere() throws IOException {
        if (!Guest.available()) {
            System.out.println("KERNEL-INTEROP: NO KERNEL GUEST - every scenario is SKIPPED "
                    + "(RDS4J_KERNEL_INTEROP=skip, or the suite was not started through interop/linux/netns-jvm/bin/java)");
        }
        Assumptions.assumeTrue(Guest.available(), "no kernel guest: the suite runs through interop/linux");
        low = InetAddress.getByName(System.getenv("RDS4J_HOST_ADDR"));
        high = InetAddress.getByName(System.getenv("RDS4J_HIGH_ADDR"));
        guest = InetAddress.getByName(Guest.address());
        dmesgLines = Guest.dmesg().split("\n").length;
    }

    @AfterEach
    void closeStacksAndCheckTheKernelLog() {
        stacks.forEach(RdsStack::close);
        String[] log = Guest.dmesg().split("\n");
        List<String> fresh = List.of(log).subList(Math.min(dmesgLines, log.length), log.length);
        dmesgLines = log.length;
        List<String> complaints = Guest.rdsComplaints(String.join("\n", fresh));
        assertTrue(complaints.isEmpty(), "the guest kernel complained: " + complaints);
    }

    private RdsStack stack(InetAddress address) {
        return stack(address, 1);
    }

    /** A stack offering {@code paths} paths (the multipath scenarios ask for the kernel's 8). */
    private RdsStack stack(InetAddress address, int paths) {
        RdsStack s = RdsStack.create(RdsStackConfig.builder().name("rds4j-" + address.getHostAddress())
                .address(address).defaultTransport("tcp").paths(paths).build());
        stacks.add(s);
        return s;
    }

    private static RdsSocket socket(RdsStack stack, InetAddress address, int port) throws IOException {
        RdsSocket s = stack.openSocket();
        s.setOption(RdsSocketOptions.SO_SNDBUF, 2 << 20);
        s.setOption(RdsSocketOptions.SO_RCVBUF, 4 << 20);
        s.bind(new InetSocketAddress(address, port));
        return s;
    }

    private static InetSocketAddress at(InetAddress a, int port) {
        return new InetSocketAddress(a, port);
    }

    private static void sendPattern(RdsSocket s, InetSocketAddress to, long k, int size) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(size);
        PayloadPattern.fill(b, k, size);
        s.send(b.flip(), to);
    }

    /** Receives {@code count} pattern messages from {@code from}, in order, with the given sizes (or any). */
    private static void receivePattern(RdsSocket s, InetSocketAddress from, int count, int[] sizes)
            throws IOException {
        for (int k = 0; k < count; k++) {
            int want = k;
            RdsDatagram d = s.receive(Duration.ofSeconds(60)).orElseThrow(
                    () -> new AssertionError("message " + want + " from " + from + " never arrived\n"
                            + diagnostics(s.stack())));
            assertEquals(from, d.source(), "source of message " + k);
            if (sizes != null) {
                assertEquals(sizes[k], d.length(), "size of message " + k);
            }
            long claimed = PayloadPattern.claimedSequence(d.payload());
            assertTrue(PayloadPattern.matches(claimed, k, d.length()),
                    "message " + k + " (" + d.length() + " bytes) claims " + claimed + " or is corrupt");
        }
    }

    /**
     * The guest's side of a failure: its RDS connections and counters, the TCP queues of its RDS/TCP sockets, and the
     * kernel stacks of its tasks that are blocked (state D) or inside RDS, so that a kernel that stopped sending can
     * be told from an rds4j that stopped reading. /proc/PID/stack, rather than a sysrq dump: the kernel log stays
     * free of call traces, which the check after each scenario reads as a complaint.
     */
    private static final String GUEST_STATE = "rdsagent conns; rdsagent counters | grep -v '=0$'; "
            + "echo '-- TCP (netstat -tn)'; netstat -tn | grep ':16385'; "
            + "echo '-- tasks blocked or in RDS'; for d in /proc/[0-9]*; do "
            + "st=$(cat $d/stack 2>/dev/null) || continue; s=$(cut -d' ' -f3 $d/stat 2>/dev/null); "
            + "case \"$s $st\" in D*|*rds_*) echo \"$(cat $d/comm) pid ${d#/proc/} state $s\"; echo \"$st\";; esac; "
            + "done";

    /**
     * What both ends know, for a failure message: rds4j's counters, connections (read on their I/O threads: each
     * path's sequence numbers and queues, and whether the connection stopped reading) and sockets, rds4j's TCP queues
     * on the RDS port ({@code ss}: a Recv-Q that grows while a reader waits would be rds4j not reading), and the
     * guest's state ({@link #GUEST_STATE}).
     */
    private static String diagnostics(RdsStack stack) {
        RdsStackInfo info = stack.info();
        StringBuilder sb = new StringBuilder("rds4j counters: ").append(info.counters()).append('\n');
        info.connections().forEach(c -> sb.append("rds4j ").append(c).append('\n'));
        info.sockets().forEach(s -> sb.append("rds4j ").append(s).append('\n'));
        sb.append("rds4j TCP (ss -tnmi):\n").append(Guest.exec(List.of("ss", "-tnmi", "( sport = :16385 or dport = "
                + ":16385 )"), Duration.ofSeconds(10)).output());
        sb.append("kernel:\n").append(Guest.run(GUEST_STATE, Duration.ofSeconds(30)).output());
        return sb.toString();
    }

    private static void assertGuestJob(Guest.Result r, String expected) {
        assertTrue(r.ok() && r.output().contains(expected), "guest job: " + r);
    }

    /** The established TCP connections between {@code a} and the guest, as "local -> remote" of this host. */
    private static List<String> tcpConnections(InetAddress a) {
        Guest.Result r = Guest.exec(List.of("ss", "-Htn", "state", "established"), Duration.ofSeconds(10));
        List<String> found = new ArrayList<>();
        for (String line : r.output().split("\n")) {
            // epoll sockets are dual-stack: ss shows [::ffff:10.213.0.1]:port
            String[] f = line.trim().replace("[::ffff:", "").replace("]", "").split("\\s+");
            if (f.length >= 4 && f[2].startsWith(a.getHostAddress() + ":") && f[3].startsWith(guest.getHostAddress()
                    + ":") && (f[2].endsWith(":16385") || f[3].endsWith(":16385"))) {
                found.add(f[2] + " -> " + f[3]);
            }
        }
        return found;
    }

    /** Asserts that the RDS connections (1 to 8 paths) between {@code a} and the guest were opened by {@code opener}. */
    private static void assertOpenedBy(InetAddress a, InetAddress opener) {
        List<String> conns = tcpConnections(a);
        assertTrue(!conns.isEmpty() && conns.size() <= 8, "1 to 8 TCP connections between " + a + " and the guest: "
                + conns);
        for (String conn : conns) {
            boolean weOpened = conn.endsWith(guest.getHostAddress() + ":16385");
            assertEquals(opener.equals(a), weOpened, "opened by " + opener.getHostAddress() + ": " + conns);
        }
    }

    // ------------------------------------------------------------------------------------------------ scenario 1

    @Test
    @Order(10)
    @DisplayName("scenario 1a: rds4j -> kernel, sizes 0 B to 1 MiB")
    void sizesToTheKernel() throws Exception {
        RdsStack s = stack(low);
        Guest.start("s1a", "rdsagent sizes-recv " + guest.getHostAddress() + ":4100 0,1,100,4096,65536,1048576 120");
        Guest.expect("s1a", "recv-ready", Duration.ofSeconds(30));
        RdsSocket out = socket(s, low, 5100);
        for (int k = 0; k < SIZES.length; k++) {
            sendPattern(out, at(guest, 4100), k, SIZES[k]);
        }
        assertTrue(out.awaitSent(Duration.ofSeconds(60)));
        assertGuestJob(Guest.await("s1a", Duration.ofSeconds(120)), "RECV done ok=6 bad=0");
    }

    @Test
    @Order(11)
    @DisplayName("scenario 1b: kernel -> rds4j, sizes 0 B to 1 MiB")
    void sizesFromTheKernel() throws Exception {
        RdsStack s = stack(low);
        introduceToTheKernel(s);                     // 1a's stack is a generation the kernel may still hold
        RdsSocket in = socket(s, low, 4101);
        Guest.Result sent = Guest.run("rdsagent sizes-send " + guest.getHostAddress() + ":5101 "
                + low.getHostAddress() + ":4101 0,1,100,4096,65536,1048576 120", Duration.ofSeconds(150));
        assertGuestJob(sent, "SIZES send-done sent=6 errors=0");
        receivePattern(in, at(guest, 5101), SIZES.length, SIZES);
    }

    @Test
    @Order(12)
    @DisplayName("scenario 1c: 10,000 mixed-size messages each way at once")
    void mixedTrafficBothWaysAtOnce() throws Exception {
        int count = 10_000;
        RdsStack s = stack(low);
        introduceToTheKernel(s);
        RdsSocket in = socket(s, low, 4103);
        RdsSocket out = socket(s, low, 5103);
        Guest.start("s1c-rx", "rdsagent recv " + guest.getHostAddress() + ":4102 " + count + " 300");
        Guest.expect("s1c-rx", "RECV ready", Duration.ofSeconds(30));
        Guest.start("s1c-tx", "rdsagent send " + guest.getHostAddress() + ":5102 " + low.getHostAddress()
                + ":4103 " + count + " 0-4096 300");
        CompletableFuture<Void> sending = CompletableFuture.runAsync(() -> {
            try {
                for (int k = 0; k < count; k++) {
                    sendPattern(out, at(guest, 4102), k, (int) ((k * 2654435761L) % 4097));
                }
                assertTrue(out.awaitSent(Duration.ofSeconds(120)));
            } catch (IOException e) {
                throw new AssertionError(e);
            }
        });
        receivePattern(in, at(guest, 5102), count, null);
        sending.get(300, TimeUnit.SECONDS);
        assertGuestJob(Guest.await("s1c-tx", Duration.ofSeconds(120)), "SEND done sent=" + count + " errors=0");
        assertGuestJob(Guest.await("s1c-rx", Duration.ofSeconds(300)), "RECV done ok=" + count + " bad=0");
    }

    // ------------------------------------------------------------------------------------------------ scenario 2

    @Test
    @Order(20)
    @DisplayName("scenario 2a: rds4j has the smaller address and sends first")
    void smallerRds4jSendsFirst() throws Exception {
        oneMessageToTheKernel(low, 4200, 5200);
        assertOpenedBy(low, low);
    }

    @Test
    @Order(21)
    @DisplayName("scenario 2b: rds4j has the smaller address, the kernel sends first")
    void kernelSendsFirstToSmallerRds4j() throws Exception {
        oneMessageFromTheKernel(low, 4201, 5201);
        assertOpenedBy(low, low);
    }

    @Test
    @Order(22)
    @DisplayName("scenario 2c: rds4j has the larger address and sends first (pokes)")
    void largerRds4jSendsFirst() throws Exception {
        oneMessageToTheKernel(high, 4202, 5202);
        assertOpenedBy(high, guest);
    }

    @Test
    @Order(23)
    @DisplayName("scenario 2d: rds4j has the larger address, the kernel sends first")
    void kernelSendsFirstToLargerRds4j() throws Exception {
        oneMessageFromTheKernel(high, 4203, 5203);
        assertOpenedBy(high, guest);
    }

    @Test
    @Order(24)
    @DisplayName("scenario 2e: both send their first message at the same moment")
    void bothSendFirstAtOnce() throws Exception {
        for (InetAddress a : List.of(low, high)) {
            RdsStack s = stack(a);
            int base = a.equals(low) ? 4204 : 4206;
            RdsSocket in = socket(s, a, base);
            RdsSocket out = socket(s, a, base + 1000);
            String job = "s2e-" + base;
            Guest.start(job + "rx", "rdsagent recv " + guest.getHostAddress() + ":" + (base + 1) + " 1 60");
            Guest.expect(job + "rx", "RECV ready", Duration.ofSeconds(30));
            Guest.start(job + "tx", "rdsagent send " + guest.getHostAddress() + ":" + (base + 2000) + " "
                    + a.getHostAddress() + ":" + base + " 1 100 60");
            sendPattern(out, at(guest, base + 1), 0, 100);
            receivePattern(in, at(guest, base + 2000), 1, new int[] {100});
            assertGuestJob(Guest.await(job + "rx", Duration.ofSeconds(60)), "RECV done ok=1 bad=0");
            assertGuestJob(Guest.await(job + "tx", Duration.ofSeconds(60)), "SEND done sent=1 errors=0");
            assertOpenedBy(a, a.equals(low) ? low : guest);
            s.close();
        }
    }

    private void oneMessageToTheKernel(InetAddress a, int guestPort, int ourPort) throws Exception {
        RdsStack s = stack(a);
        String job = "s2-" + guestPort;
        Guest.start(job, "rdsagent recv " + guest.getHostAddress() + ":" + guestPort + " 1 60");
        Guest.expect(job, "RECV ready", Duration.ofSeconds(30));
        RdsSocket out = socket(s, a, ourPort);
        sendPattern(out, at(guest, guestPort), 0, 100);
        assertGuestJob(Guest.await(job, Duration.ofSeconds(60)), "RECV done ok=1 bad=0");
    }

    private void oneMessageFromTheKernel(InetAddress a, int ourPort, int guestPort) throws Exception {
        RdsStack s = stack(a);
        RdsSocket in = socket(s, a, ourPort);
        String send = "rdsagent send " + guest.getHostAddress() + ":" + guestPort + " " + a.getHostAddress() + ":"
                + ourPort + " 1 100 60";
        assertGuestJob(Guest.run(send, Duration.ofSeconds(90)), "SEND done sent=1 errors=0");
        java.util.Optional<RdsDatagram> first = in.receive(Duration.ofSeconds(10));
        if (first.isEmpty()) {
            // The kernel queued its message before our connection existed (that is the scenario), while it still
            // held the previous stack's connection to this address; if it reads the new stack's GEN_NUM before
            // that message has left, it discards it, as between kernels after a restart (docs/interop.md; seen
            // once in 2b on 6.1). The connection is up now and the kernel knows the generation: its next
            // message must arrive.
            System.out.println("KERNEL-INTEROP scenario 2b/2d: the kernel's first message to the new stack did not"
                    + " come within 10 s (its generation switch); the kernel sends it again");
            assertGuestJob(Guest.run(send, Duration.ofSeconds(90)), "SEND done sent=1 errors=0");
            first = in.receive(Duration.ofSeconds(60));
        }
        RdsDatagram d = first.orElseThrow(() -> new AssertionError("the kernel's message never arrived\n"
                + diagnostics(s)));
        assertEquals(at(guest, guestPort), d.source());
        assertEquals(100, d.length());
        assertTrue(PayloadPattern.matches(PayloadPattern.claimedSequence(d.payload()), 0, 100), "not message 0");
    }

    // ------------------------------------------------------------------------------------------------ scenario 3

    @Test
    @Order(30)
    @DisplayName("scenario 3a: rds4j pings the kernel")
    void rds4jPingsTheKernel() throws Exception {
        RdsStack s = stack(low);
        RdsSocket ping = socket(s, low, 0);
        for (int i = 0; i < 3; i++) {
            ping.send(ByteBuffer.allocate(0), at(guest, 0));
            RdsDatagram pong = ping.receive(Duration.ofSeconds(30)).orElseThrow(
                    () -> new AssertionError("no pong from the kernel"));
            assertEquals(at(guest, 0), pong.source());
            assertEquals(0, pong.length());
        }
    }

    @Test
    @Order(31)
    @DisplayName("scenario 3b: the kernel pings rds4j")
    void theKernelPingsRds4j() throws Exception {
        RdsStack s = stack(low);
        socket(s, low, 4300);                      // the host is up once a socket is bound
        Guest.Result r = Guest.run("rdsagent ping " + low.getHostAddress() + " 3 " + guest.getHostAddress() + " 30",
                Duration.ofSeconds(60));
        assertGuestJob(r, "PING done sent=3 replies=3");
        assertEquals(3, r.output().lines().filter(l -> l.contains("rtt_us=")).count(), r.output());
        assertTrue(s.counters().get("recv_ping") >= 3, "the 3 pings were answered by rds4j: " + s.counters());
    }

    // ------------------------------------------------------------------------------------------------ scenario 4

    @Test
    @Order(200)
    @DisplayName("scenario 4a: rds4j, the smaller address, and the kernel agree on 8 paths; rds4j opens them all")
    void rds4jOpensEightPathsToTheKernel() throws Exception {
        RdsStack s = stack(low, 8);
        Connection c = echoOverManySockets(s, low, 4400, 5400);
        assertEquals(8, c.peerPaths(), "the kernel offers its 8 paths");
        assertEquals(8, c.lanes(), "both use 8");
        awaitPathsUp(c);
        List<String> conns = tcpConnections(low);
        assertEquals(8, conns.size(), "8 TCP connections between rds4j and the kernel: " + conns);
        for (String conn : conns) {
            assertTrue(conn.endsWith(guest.getHostAddress() + ":16385"), "rds4j opened every path: " + conns);
        }
        for (int i = 0; i < 8; i++) {
            int port = c.path(i).transportConnection().localAddress().getPort();
            assertEquals(i, port % 8, "path " + i + " connects from a port that names it (SPORT_IDX): " + port);
        }
        assertSpread(c);
    }

    @Test
    @Order(201)
    @DisplayName("scenario 4b: the kernel, the smaller address, opens 8 paths to rds4j, which places them")
    void theKernelOpensEightPathsToRds4j() throws Exception {
        RdsStack s = stack(high, 8);
        Connection c = echoOverManySockets(s, high, 4410, 5410);
        assertEquals(8, c.lanes(), "both use 8: " + c.peerPaths());
        awaitPathsUp(c);
        List<String> conns = tcpConnections(high);
        assertEquals(8, conns.size(), "8 TCP connections between rds4j and the kernel: " + conns);
        for (String conn : conns) {
            assertTrue(conn.startsWith(high.getHostAddress() + ":16385 "), "the kernel opened every path: " + conns);
        }
        if (c.peerEncodesPaths()) {                  // 7.x: each connection sits on the path its port names
            for (int i = 0; i < 8; i++) {
                int port = c.path(i).transportConnection().remoteAddress().getPort();
                assertEquals(i, port % 8, "the kernel's connection from port " + port + " is on path " + i);
            }
        }
        assertSpread(c);
    }

    /** 16 sockets exchange a message each with the guest's echo agent: on their lanes once the 8 are agreed. */
    private Connection echoOverManySockets(RdsStack s, InetAddress local, int echoPort, int firstPort)
            throws Exception {
        Guest.start("s4", "rdsagent echo " + guest.getHostAddress() + ":" + echoPort);
        Guest.expect("s4", "ECHO ready", Duration.ofSeconds(30));
        try {
            List<RdsSocket> socks = new ArrayList<>();
            for (int p = 0; p < 16; p++) {
                socks.add(socket(s, local, firstPort + p));
            }
            for (int round = 0; round < 2; round++) {        // the first round may all go on path 0
                for (RdsSocket sock : socks) {
                    sendPattern(sock, at(guest, echoPort), 0, 64);
                    receivePattern(sock, at(guest, echoPort), 1, new int[] {64});
                }
                if (round == 0) {
                    Connection c = connectionTo(s);
                    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                    while (c.lanes() < 8 && System.nanoTime() < deadline) {
                        Thread.onSpinWait();
                    }
                }
            }
        } finally {
            Guest.kill("s4");
        }
        return connectionTo(s);
    }

    private static Connection connectionTo(RdsStack s) {
        return ((CoreStack) s).connections().stream().filter(x -> x.peer().equals(guest)).findFirst().orElseThrow();
    }

    /** Waits (bounded) until path {@code lane} no longer uses {@code tc}: the abort reached the path. */
    private static void awaitReplaced(Connection c, int lane, org.rds4j.core.spi.TransportConnection tc) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (c.path(lane).transportConnection() == tc) {
            if (System.nanoTime() > deadline) {
                fail("path " + lane + " still uses the connection it aborted 10 s ago: " + describe(c));
            }
            java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
        }
    }

    /** Waits (bounded) until every path in use is up: the extra paths connect right after the probe's answer. */
    private static void awaitPathsUp(Connection c) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (true) {
            boolean all = true;
            for (int i = 0; i < c.lanes(); i++) {
                all &= c.path(i).state() == org.rds4j.core.path.PathState.UP;
            }
            if (all) {
                return;
            }
            if (System.nanoTime() > deadline) {
                fail("not all " + c.lanes() + " paths came up: " + describe(c));
            }
            java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
        }
    }

    /** The 16 sockets' second round went over more than one lane. */
    private static void assertSpread(Connection c) {
        int used = 0;
        for (int i = 0; i < c.lanes(); i++) {
            if (Long.compareUnsigned(c.path(i).nextTxSeq(), 3) > 0) {    // more than the map and the probe
                used++;
            }
        }
        assertTrue(used >= 2, "the sockets spread over the lanes: " + describe(c));
    }

    private static String describe(Connection c) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < c.pathCount(); i++) {
            sb.append("\n  ").append(c.path(i));
        }
        return sb.toString();
    }

    // ------------------------------------------------------------------------------------------------ scenario 5

    @Test
    @Order(50)
    @DisplayName("scenario 5a: a kernel receiver stops reading; rds4j's senders get ENOBUFS or wait, then resume")
    void aStalledKernelReceiverCongestsRds4jSenders() throws Exception {
        RdsStack s = stack(low);
        InetSocketAddress slow = at(guest, 4500);
        // The kernel socket's budget is 20000 bytes: twenty 1000-byte messages unread congest its port.
        Guest.start("s5a", "rdsagent stall " + slow.getAddress().getHostAddress() + ":4500 4 20000");
        Guest.expect("s5a", "STALL ready", Duration.ofSeconds(30));
        // A small send buffer, so the sender is held back (EAGAIN) until the kernel's map arrives: messages accepted
        // before it are not affected by the congestion (as in the kernel); with a large buffer they all would be.
        RdsSocket nonBlocking = s.openSocket();
        nonBlocking.setOption(RdsSocketOptions.SO_SNDBUF, 20_000);
        nonBlocking.bind(at(low, 5500));
        nonBlocking.configureBlocking(false);
        nonBlocking.setOption(RdsSocketOptions.RDS_CONG_MONITOR, true);
        long k = 0;
        boolean refused = false;
        while (!refused && k < 2000) {
            try {
                sendPattern(nonBlocking, slow, k, 1000);
                k++;
            } catch (EnobufsException e) {
                refused = true;                       // the kernel's congestion map arrived with port 4500 set
            } catch (EagainException e) {
                waitWritable(nonBlocking);
            }
        }
        assertTrue(refused, "no ENOBUFS after " + k + " messages to a receiver that does not read\n"
                + diagnostics(s));
        assertTrue(s.counters().get("cong_send_error") >= 1);
        // A blocking sender waits for the port instead (the kernel applies no timeout to this wait either).
        RdsSocket blocking = socket(s, low, 5501);
        CompletableFuture<Void> waiting = CompletableFuture.runAsync(() -> {
            try {
                sendPattern(blocking, slow, 0, 1000);
            } catch (IOException e) {
                throw new AssertionError(e);
            }
        });
        Guest.expect("s5a", "STALL draining", Duration.ofSeconds(30));
        // The kernel drains, clears the bit and sends its map: the monitor tells the non-blocking socket...
        RdsDatagram note = nonBlocking.receive(Duration.ofSeconds(30)).orElseThrow(
                () -> new AssertionError("no congestion notification\n" + diagnostics(s)));
        assertEquals(RdsDatagram.Kind.CONGESTION_UPDATE, note.kind());
        assertTrue((note.congestionMask() & (1L << (4500 % 64))) != 0, "mask 0x"
                + Long.toHexString(note.congestionMask()));
        sendPattern(nonBlocking, slow, k, 1000);      // ...which can send again,
        k++;
        waiting.get(30, TimeUnit.SECONDS);            // and the blocked sender went on.
        assertTrue(s.counters().get("cong_send_blocked") >= 1, s.counters().toString());
        assertTrue(nonBlocking.awaitSent(Duration.ofSeconds(30)) && blocking.awaitSent(Duration.ofSeconds(30)));
        assertGuestJob(Guest.await("s5a", Duration.ofSeconds(60)), "STALL done received=" + (k + 1) + " ok="
                + (k + 1) + " bad=0");
    }

    private static void waitWritable(RdsSocket socket) throws IOException {
        try (RdsSelector selector = RdsSelector.open(socket.stack())) {
            selector.register(socket, RdsSelector.OP_WRITE);
            selector.select(Duration.ofSeconds(10), (x, ops) -> { });
        }
    }

    @Test
    @Order(51)
    @DisplayName("scenario 5b: an rds4j receiver stops reading; the kernel's sender gets ENOBUFS, then resumes")
    void aStalledRds4jReceiverCongestsTheKernelsSender() throws Exception {
        // Enough that the kernel is still sending when rds4j's congested map reaches it (the map goes out once 20
        // messages are unread, but a fast sender has queued hundreds by then).
        int count = 5000;
        RdsStack s = stack(low);
        RdsSocket in = s.openSocket();
        in.setOption(RdsSocketOptions.SO_RCVBUF, 20_000);   // budget 20000 bytes: the port congests quickly
        in.bind(at(low, 4501));
        // On 6.12 a message of the sender below was caught by the generation switch (seen: message 1 given a
        // sequence number, never on the wire).
        introduceToTheKernel(s);
        long before = kernelCounter("cong_send_error");
        Guest.start("s5b", "rdsagent send-nb " + guest.getHostAddress() + ":5501 " + low.getHostAddress()
                + ":4501 " + count + " 1000 120");
        // Not reading: wait (bounded) until the kernel's sender has been refused for congestion.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (kernelCounter("cong_send_error") == before) {
            assertTrue(System.nanoTime() < deadline, "the kernel never saw rds4j's port congested\n"
                    + diagnostics(s));
        }
        receivePattern(in, at(guest, 5501), count, null);   // drain: the map clears, the kernel resumes
        Guest.Result sent = Guest.await("s5b", Duration.ofSeconds(60));
        assertGuestJob(sent, "SEND-NB done sent=" + count);
        long enobufs = Long.parseLong(sent.output().replaceAll("(?s).*enobufs=(\\d+).*", "$1"));
        assertTrue(enobufs > 0, "the kernel's sender saw no ENOBUFS: " + sent.output());
        System.out.println("KERNEL-INTEROP scenario 5b: the kernel's sender got ENOBUFS " + enobufs + " times");
    }

    private static long kernelCounter(String name) {
        String out = Guest.run("rdsagent counters", Duration.ofSeconds(30)).output();
        for (String line : out.split("\n")) {
            int i = line.indexOf(" " + name + "=");
            if (i >= 0) {
                return Long.parseLong(line.substring(i + name.length() + 2).trim());
            }
        }
        throw new AssertionError("no counter " + name + " in: " + out);
    }

    // ------------------------------------------------------------------------------------------------ scenario 6

    @Test
    @Order(60)
    @DisplayName("scenario 6: the TCP connection is reset mid-stream, both ways; nothing lost or duplicated")
    void connectionLossMidStream() throws Exception {
        int count = 10_000;
        RdsStack s = stack(low);
        RdsSocket in = socket(s, low, 4601);
        RdsSocket out = socket(s, low, 5601);
        // On 6.1 the kernel's first message was caught by the generation switch once (a CI run got message 1 first).
        introduceToTheKernel(s);
        Guest.start("s6-rx", "rdsagent recv " + guest.getHostAddress() + ":4600 " + count + " 300");
        Guest.expect("s6-rx", "RECV ready", Duration.ofSeconds(30));
        Guest.start("s6-tx", "rdsagent send " + guest.getHostAddress() + ":5600 " + low.getHostAddress()
                + ":4601 " + count + " 0-4096 300");
        // Send and receive in step, so that both directions are mid-stream whenever the guest resets every RDS/TCP
        // connection (SOCK_DESTROY: RST, cutting bytes in flight both ways, mid-message), three times.
        int[] resetAt = {count / 5, count / 2, 4 * count / 5};
        int next = 0;
        for (int k = 0; k < count; k++) {
            if (next < resetAt.length && k == resetAt[next]) {
                Guest.Result r = Guest.run("rdsagent kill-tcp", Duration.ofSeconds(30));
                assertKilled(r);
                next++;
            }
            sendPattern(out, at(guest, 4600), k, (int) ((k * 2654435761L) % 4097));
            receiveOne(in, at(guest, 5600), k);
        }
        assertTrue(out.awaitSent(Duration.ofSeconds(240)), "rds4j's messages were never all acknowledged");
        assertGuestJob(Guest.await("s6-tx", Duration.ofSeconds(120)), "SEND done sent=" + count + " errors=0");
        assertGuestJob(Guest.await("s6-rx", Duration.ofSeconds(300)), "RECV done ok=" + count + " bad=0");
        assertTrue(in.receive(Duration.ofMillis(500)).isEmpty(), "a duplicate arrived after the last message");
        assertTrue(s.counters().get("conn_reset") >= 1, "the resets reached rds4j: " + s.counters());
        System.out.println("KERNEL-INTEROP scenario 6 counters: " + s.counters());
    }

    @Test
    @Order(202)
    @DisplayName("scenario 6b: single lanes of the 8 paths are reset mid-stream by the kernel; nothing rds4j sent is lost"
            + " or duplicated")
    void singleLaneResetsMidStream() throws Exception {
        int senders = 4;
        int perSender = 2_500;
        int count = senders * perSender;
        long seed = new java.util.SplittableRandom().nextLong();
        java.util.SplittableRandom random = new java.util.SplittableRandom(seed);
        System.out.println("KERNEL-INTEROP scenario 6b: lanes chosen with seed " + seed);
        RdsStack s = stack(low, 8);
        List<RdsSocket> outs = new ArrayList<>();
        for (int i = 0; i < senders; i++) {
            outs.add(socket(s, low, 5611 + i));
        }
        Guest.start("s6b-rx", "rdsagent recv " + guest.getHostAddress() + ":4610 " + count + " 300");
        Guest.expect("s6b-rx", "RECV ready", Duration.ofSeconds(30));
        // Only rds4j -> kernel. The kernel aborts the lane's TCP socket (SOCK_DESTROY, as in scenario 6, for that one
        // connection). Cutting it from rds4j's side with a reset instead, mid-stream, wedged the path inside 6.1 and
        // 6.12 kernels: every later connection for it was reset at once, and the kernel stopped delivering
        // (docs/protocol.md, "Paths"); kernels drop their own connections with shutdown(), not a reset.
        Connection c = null;
        int resets = 0;
        for (int k = 0; k < count; k++) {
            if (c == null) {
                c = ((CoreStack) s).connections().stream().filter(x -> x.peer().equals(guest)).findFirst()
                        .orElse(null);
            }
            if (c != null && c.lanes() > 1 && k > 0 && k % 1_000 == 0) {
                // One lane at a time: the last one reset is back (with all the others) before the next goes. Without
                // SPORT_IDX (6.1, 6.12) two lanes down together can swap places at the kernel, which then takes one
                // lane's resent messages for the other's new ones; kernel pairs of 6.1 share that (docs/protocol.md).
                awaitPathsUp(c);
                int lane = random.nextInt(c.lanes());              // one lane, aborted by the kernel
                org.rds4j.core.spi.TransportConnection tc = c.path(lane).transportConnection();
                if (tc != null) {
                    Guest.Result r = Guest.run("rdsagent kill-tcp " + tc.localAddress().getPort(),
                            Duration.ofSeconds(30));
                    assertTrue(r.output().contains("destroyed=1"), "kill-tcp of lane " + lane + ": " + r);
                    resets++;
                    awaitReplaced(c, lane, tc);                    // the path has seen it go: no stale UP below
                }
            }
            RdsSocket out = outs.get(k % senders);
            sendPattern(out, at(guest, 4610), k / senders, (int) ((k * 2654435761L) % 4097));
        }
        for (RdsSocket out : outs) {
            assertTrue(out.awaitSent(Duration.ofSeconds(240)), "rds4j's messages were never all acknowledged");
        }
        assertGuestJob(Guest.await("s6b-rx", Duration.ofSeconds(300)), "RECV done ok=" + count + " bad=0");
        assertNotNull(c, "no connection to the guest");
        assertEquals(8, c.lanes(), "the resets were of single lanes of 8 (seed " + seed + ")");
        assertTrue(resets >= 5, "lanes were reset: " + resets + " (seed " + seed + ")");
        System.out.println("KERNEL-INTEROP scenario 6b: " + resets + " single-lane resets, seed " + seed + ", counters "
                + s.counters());
    }

    @Test
    @Order(62)
    @DisplayName("scenario 6c: a kernel with net.rds.ping_enable=0; rds4j says so within seconds, fails its senders with"
            + " ETIMEDOUT, and recovers when the kernel answers again")
    void aKernelThatAnswersNoPings() throws Exception {
        RdsStack s = stack(low);
        RdsSocket out = socket(s, low, 5620);
        out.setOption(RdsSocketOptions.RDS_RECVERR, true);
        Guest.start("s6c-rx", "rdsagent recv " + guest.getHostAddress() + ":4620 100 120");
        Guest.expect("s6c-rx", "RECV ready", Duration.ofSeconds(30));
        assertTrue(Guest.run("echo 0 > /proc/sys/net/rds/ping_enable", Duration.ofSeconds(30)).ok());
        org.rds4j.EtimedoutException refused = null;
        try {
            for (int k = 0; k < 100; k++) {
                sendPattern(out, at(guest, 4620), k, 100);
            }
            assertGuestJob(Guest.await("s6c-rx", Duration.ofSeconds(60)), "RECV done ok=100 bad=0");
            assertTrue(!out.awaitSent(Duration.ofSeconds(1)), "nothing the kernel received can be confirmed");
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            for (int k = 100; refused == null && System.nanoTime() < deadline; k++) {
                try {
                    sendPattern(out, at(guest, 4620), k, 100);
                    java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(100));
                } catch (org.rds4j.EtimedoutException e) {
                    refused = e;
                }
            }
        } finally {
            Guest.run("echo 1 > /proc/sys/net/rds/ping_enable", Duration.ofSeconds(30));
        }
        assertNotNull(refused, "sends to a kernel that answers no ping never failed: " + s.counters());
        assertTrue(refused.getMessage().contains("net.rds.ping_enable"), refused.getMessage());
        assertTrue(s.counters().get("ack_peer_unresponsive") >= 1, s.counters().toString());
        RdsDatagram failed = out.receive(Duration.ofSeconds(5)).orElseThrow(
                () -> new AssertionError("no SEND_FAILED notification"));
        assertEquals(RdsDatagram.Kind.SEND_FAILED, failed.kind());
        assertEquals(RdsDatagram.Failure.UNACKNOWLEDGED, failed.failure());
        // The kernel answers again: within a few seconds (rds4j asks once a second) sends go and are confirmed.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        boolean sent = false;
        while (!sent && System.nanoTime() < deadline) {
            try {
                sendPattern(out, at(guest, 4620), 0, 100);
                sent = true;
            } catch (org.rds4j.EtimedoutException e) {
                java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(200));
            }
        }
        assertTrue(sent, "sends never went again after ping_enable=1");
        assertTrue(out.awaitSent(Duration.ofSeconds(30)), "the message after recovery was never confirmed");
    }

    /**
     * The guest reset RDS/TCP connections. With 8 paths (and connections of earlier scenarios' stacks still closing)
     * a socket can vanish between the agent's listing and its reset: ENOENT for those is fine, as long as some were
     * reset and nothing else failed.
     */
    private static void assertKilled(Guest.Result r) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("KILLTCP done found=(\\d+) destroyed=(\\d+)")
                .matcher(r.output());
        assertTrue(m.find() && Integer.parseInt(m.group(2)) >= 1, "kill-tcp reset nothing: " + r);
        assertTrue(r.output().lines().filter(l -> l.startsWith("RDSAGENT KILLTCP local=") && !l.endsWith("rc=OK"))
                .allMatch(l -> l.endsWith("rc=No such file or directory")), "kill-tcp: " + r);
    }

    /**
     * The kernel still holds the previous scenarios' connection to this address. A new stack is a new peer
     * generation: when the kernel reads its GEN_NUM it discards what it had sent and not yet seen acknowledged (the
     * kernel's rule between kernels too), which catches a kernel sender that started before it read it. So before a
     * scenario starts a kernel sender towards a new stack, the kernel learns the new generation: a ping, answered.
     */
    private void introduceToTheKernel(RdsStack s) throws IOException {
        introduceToTheKernel(s, low);
    }

    /** As {@link #introduceToTheKernel(RdsStack)}, for a stack at {@code local}. */
    private void introduceToTheKernel(RdsStack s, InetAddress local) throws IOException {
        RdsSocket contact = socket(s, local, 0);
        contact.send(ByteBuffer.allocate(0), at(guest, 0));
        assertTrue(contact.receive(Duration.ofSeconds(30)).isPresent(), "no pong from the kernel");
        contact.close();
    }

    /** Receives message {@code k} of the pattern from {@code from}; anything else (a gap, a duplicate) fails. */
    private static void receiveOne(RdsSocket s, InetSocketAddress from, long k) throws IOException {
        RdsDatagram d = s.receive(Duration.ofSeconds(60)).orElseThrow(
                () -> new AssertionError("message " + k + " from " + from + " never arrived\n" + diagnostics(s.stack())));
        assertEquals(from, d.source());
        long claimed = PayloadPattern.claimedSequence(d.payload());
        if (!PayloadPattern.matches(claimed, k, d.length())) {
            throw new AssertionError("expected message " + k + ", got one claiming " + claimed + " (" + d.length()
                    + " bytes)\n" + diagnostics(s.stack()));
        }
    }

    // ------------------------------------------------------------------------------------------------ scenario 7

    @Test
    @Order(70)
    @DisplayName("scenario 7: rds4j restarts while the kernel keeps sending; the kernel sees the new generation")
    void rds4jRestartsWhileTheKernelSends() throws Exception {
        // rds4j has the larger address, so the kernel reconnects by itself, as it would to a restarted kernel.
        int count = 20_000;
        RdsStack first = stack(high);
        // The first stack is a new generation to a kernel that still holds 2c/2d's connection: learnt after the
        // sender started, the kernel discards what it had not seen acknowledged (a 6.12 run lost message 4 so).
        introduceToTheKernel(first, high);
        RdsSocket in = socket(first, high, 4700);
        long unreadBound = in.getOption(RdsSocketOptions.SO_RCVBUF) / 2 / 1000 + 1;
        Guest.start("s7-tx", "rdsagent send " + guest.getHostAddress() + ":5700 " + high.getHostAddress()
                + ":4700 " + count + " 1000 300");
        try {
            long k = 0;
            for (; k < count / 4; k++) {
                receiveOne(in, at(guest, 5700), k);
            }
            long lastBeforeRestart = k - 1;
            first.close();                      // the restart: the old stack and its unread messages are gone
            RdsStack second = stack(high);
            RdsSocket again = socket(second, high, 4700);
            // The kernel's semantics: it frees a message once TCP acknowledged it; on the new generation it starts
            // its sequence numbers again and discards what was unacknowledged, and messages still queued go to the
            // new stack. So the new stack sees a suffix of the stream, in order, without duplicates. Where it starts
            // may overlap what the old stack read (bytes read whose TCP acknowledgement had not reached the kernel,
            // resent before the kernel read the new GEN_NUM) or leave a gap (read by the old stack but not by its
            // application, or discarded unacknowledged); both are bounded by what can be in flight: the kernel
            // sender's buffer (256 KiB, 262 messages of 1000 bytes) plus what the old socket could hold unread
            // before its congestion map stopped the sender (half its SO_RCVBUF). With only the first term the bound
            // failed once in 15 runs: the old stack had read 302 messages past its application's last.
            long inFlight = 262 + unreadBound;
            long windowEnd = lastBeforeRestart + 1 + inFlight;
            RdsDatagram d = again.receive(Duration.ofSeconds(60)).orElseThrow(
                    () -> new AssertionError("nothing arrived after the restart\n" + diagnostics(second)));
            long resumedAt = PayloadPattern.claimedSequence(d.payload());
            assertTrue(Math.abs(resumedAt - (lastBeforeRestart + 1)) <= inFlight, "the new stack resumed at message "
                    + resumedAt + ", the old one read up to " + lastBeforeRestart + " (bound " + inFlight + ")");
            System.out.println("KERNEL-INTEROP scenario 7: the new stack resumed at message " + resumedAt);
            // Resent messages of the old generation can still be arriving when the kernel reads the new stack's
            // GEN_NUM; it then discards those it had sent but not seen acknowledged (6.12 did so in a CI run: the new
            // stack got 5005, 5006, then 5008). So inside the in-flight window a message may be missing; past it,
            // and anywhere as a duplicate or out of order, nothing may.
            long skippedInWindow = 0;
            long previous = resumedAt;
            while (previous < count - 1) {
                long want = previous + 1;
                RdsDatagram next = again.receive(Duration.ofSeconds(60)).orElseThrow(() -> new AssertionError(
                        "message " + want + " from the kernel never arrived\n" + diagnostics(second)));
                assertEquals(at(guest, 5700), next.source());
                long claimed = PayloadPattern.claimedSequence(next.payload());
                boolean skipInWindow = claimed > want && claimed <= windowEnd;
                if (!(claimed == want || skipInWindow) || next.length() != 1000) {
                    throw new AssertionError("expected message " + want + (want <= windowEnd ? " (or a later one up"
                            + " to " + windowEnd + ", the restart's in-flight window)" : "") + ", got one claiming "
                            + claimed + " (" + next.length() + " bytes)\n" + diagnostics(second));
                }
                skippedInWindow += claimed - want;
                previous = claimed;
            }
            assertGuestJob(Guest.await("s7-tx", Duration.ofSeconds(120)), "SEND done sent=" + count + " errors=0");
            assertTrue(again.receive(Duration.ofMillis(500)).isEmpty(), "a duplicate arrived after the last message");
            long lost = Math.max(0, resumedAt - lastBeforeRestart - 1);
            long again2 = Math.max(0, lastBeforeRestart + 1 - resumedAt);
            System.out.println("KERNEL-INTEROP scenario 7: the old stack read messages 0.." + lastBeforeRestart
                    + ", the new one " + resumedAt + ".." + (count - 1) + ": " + lost + " skipped, " + again2
                    + " received by both (in flight at the restart, as between two kernels); " + skippedInWindow
                    + " discarded by the kernel as it switched generation");
        } finally {
            // A failure must not leave the sender running into the next scenarios.
            Guest.kill("s7-tx");
        }
    }

    @Test
    @Order(75)
    @DisplayName("scenario 7b: a stack on 8 paths closes and one on 1 path starts at once on the same address; the"
            + " kernel's answers reach the new one")
    void aStackRestartedAtOnceWithOnePathHearsTheKernel() throws Exception {
        // The kernel keeps the number of paths of the stack before (8) until the new stack's probe says 1. If the
        // first data of the new stack reached the kernel before its probe, a 6.12 kernel queued its answer on a path
        // chosen among 8, which nobody opens: the answer never left (4 runs of 4 failed by round 5, each with the echo
        // stuck in the kernel's send queue, before rds4j sent its probe ahead of the data that waited for the
        // connection). The scenario 11 failure of a CI run on 6.12 (a kernel sender stalled after a tool's stack on
        // 8 paths closed and one on 1 path took the address) had the same shape.
        Guest.start("s7b", "rdsagent echo " + guest.getHostAddress() + ":4730");
        Guest.expect("s7b", "ECHO ready", Duration.ofSeconds(30));
        try {
            for (int round = 0; round < 8; round++) {
                RdsStack before = stack(low, 8);
                RdsSocket a = socket(before, low, 5730);
                sendPattern(a, at(guest, 4730), round, 64);
                assertTrue(a.receive(Duration.ofSeconds(20)).isPresent(), "the echo to the first stack");
                Connection c = connectionTo(before);
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                while (c.lanes() < 8 && System.nanoTime() < deadline) {
                    java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
                }
                awaitPathsUp(c);
                // The kernel floods the first stack, so that it closes with unread bytes: its sockets reset.
                Guest.start("s7b-tx", "rdsagent send " + guest.getHostAddress() + ":5732 " + low.getHostAddress()
                        + ":5730 1000000 1000 60");
                assertTrue(a.receive(Duration.ofSeconds(20)).isPresent(), "the flood reached the first stack");
                before.close();
                Guest.kill("s7b-tx");
                RdsStack after = stack(low, 1);
                RdsSocket b = socket(after, low, 5731);
                sendPattern(b, at(guest, 4730), round, 64);
                int r = round;
                RdsDatagram d = b.receive(Duration.ofSeconds(20)).orElseThrow(() -> new AssertionError("round " + r
                        + ": the kernel's echo never reached the restarted stack\n" + diagnostics(after)));
                assertEquals(round, PayloadPattern.claimedSequence(d.payload()));
                after.close();
            }
        } finally {
            Guest.kill("s7b-tx");
            Guest.kill("s7b");
        }
    }

    // ------------------------------------------------------------------------------------------------ scenario 10

    @Test
    @Order(100)
    @DisplayName("scenario 10: 1,000 zero-length messages from ./rds4j send reach a kernel receiver before it exits")
    void zeroLengthMessagesReachTheKernelBeforeTheToolExits() throws Exception {
        Guest.start("s10", "rdsagent recv " + guest.getHostAddress() + ":4950 1000 120");
        Guest.expect("s10", "RECV ready", Duration.ofSeconds(30));
        try (ToolJvm send = ToolJvm.start("send", "--bind", low.getHostAddress() + ":5950", "--to",
                guest.getHostAddress() + ":4950", "--count", "1000", "--size", "0")) {
            assertEquals(0, send.awaitExit(Duration.ofSeconds(90)), "rds4j send failed:\n" + send.output());
            assertTrue(send.output().contains("OK"), send.output());
        }
        // The tool closed its stack on exit: whatever it had not sent by then would be gone.
        assertGuestJob(Guest.await("s10", Duration.ofSeconds(60)), "RECV done ok=1000 bad=0");
    }

    // ------------------------------------------------------------------------------------------------ scenario 11

    @Test
    @Order(110)
    @DisplayName("scenario 11: throughput rds4j -> kernel and kernel -> rds4j at 64 B and 8 KiB (measured and"
            + " printed, not a target)")
    void throughputWithTheKernel() throws Exception {
        RdsStack s = stack(low);
        StringBuilder report = new StringBuilder("KERNEL-INTEROP scenario 11 [" + System.getenv("RDS4J_KERNEL_VERSION")
                + "]:");
        int port = 4960;
        for (int size : new int[] {64, 8192}) {
            int count = size == 64 ? 20_000 : 4_000;
            // rds4j -> kernel, timed by the kernel's receiver from its first message to its last; the socket keeps
            // the default send buffer (106,496 bytes, as the kernel's), so acknowledgement round trips count
            RdsSocket out = s.openSocket();
            out.bind(at(low, port + 1));
            Guest.start("s11-rx", "rdsagent recv " + guest.getHostAddress() + ":" + port + " " + count + " 120");
            Guest.expect("s11-rx", "RECV ready", Duration.ofSeconds(30));
            ByteBuffer b = ByteBuffer.allocate(size);
            for (int k = 0; k < count; k++) {
                PayloadPattern.fill(b.clear(), k, size);
                out.send(b.flip(), at(guest, port));
            }
            assertTrue(out.awaitSent(Duration.ofSeconds(60)), "not all acknowledged\n" + diagnostics(s));
            Guest.Result rx = Guest.await("s11-rx", Duration.ofSeconds(120));
            assertGuestJob(rx, "RECV done ok=" + count + " bad=0");
            java.util.regex.Matcher m = java.util.regex.Pattern.compile(" us=(\\d+)").matcher(rx.output());
            assertTrue(m.find(), rx.output());
            long toKernelUs = Math.max(1, Long.parseLong(m.group(1)));
            // kernel -> rds4j, timed by rds4j from the first message to the last
            RdsSocket in = socket(s, low, port + 2);
            Guest.start("s11-tx", "rdsagent send " + guest.getHostAddress() + ":" + (port + 3) + " "
                    + low.getHostAddress() + ":" + (port + 2) + " " + count + " " + size + " 120");
            long first = 0;
            long last = 0;
            for (int k = 0; k < count; k++) {
                int want = k;
                RdsDatagram d = in.receive(Duration.ofSeconds(60)).orElseThrow(
                        () -> new AssertionError("message " + want + " never arrived\n" + diagnostics(s)));
                last = System.nanoTime();
                first = k == 0 ? last : first;
                assertTrue(d.length() == size && PayloadPattern.matches(PayloadPattern.claimedSequence(d.payload()), k,
                        size), () -> "message " + want + " is not the one sent: " + d.length() + " bytes claiming message "
                        + PayloadPattern.claimedSequence(d.payload()) + "\n" + diagnostics(s));
            }
            assertGuestJob(Guest.await("s11-tx", Duration.ofSeconds(60)), "SEND done sent=" + count + " errors=0");
            long fromKernelUs = Math.max(1, (last - first) / 1000);
            report.append(String.format(" %d B x %,d: rds4j->kernel %,d msgs/s (%.1f MB/s); kernel->rds4j %,d msgs/s"
                            + " (%.1f MB/s);", size, count, count * 1_000_000L / toKernelUs,
                    (double) count * size / toKernelUs, count * 1_000_000L / fromKernelUs,
                    (double) count * size / fromKernelUs));
            out.close();
            in.close();
            port += 10;
        }
        System.out.println(report);
    }

    // ------------------------------------------------------------------------------------------------ scenario 12

    @Test
    @Order(120)
    @DisplayName("scenario 12: a stack with TLS towards another rds4j host keeps talking plain RDS/TCP to the kernel"
            + " on 16385, both at once")
    void aTlsStackKeepsTalkingToTheKernel() throws Exception {
        int tlsPort = RdsTlsConfig.DEFAULT_PORT;
        RdsStack a = stackWith(low, RdsStackConfig.builder().tls(RdsTlsConfig.builder(TestTls.context("node-a"))
                .port(tlsPort).peers(high.getHostAddress() + "/32").build()));
        RdsStack b = stackWith(high, RdsStackConfig.builder().tls(RdsTlsConfig.builder(TestTls.context("node-b"))
                .port(tlsPort).build()));
        Guest.start("s12", "rdsagent echo " + guest.getHostAddress() + ":4750");
        Guest.expect("s12", "ECHO ready", Duration.ofSeconds(30));
        try {
            RdsSocket sa = socket(a, low, 5750);
            RdsSocket sb = socket(b, high, 5751);
            InetSocketAddress kernelEcho = at(guest, 4750);
            InetSocketAddress rds4jPeer = at(high, 5751);
            for (int k = 0; k < 1000; k++) {
                sendPattern(sa, kernelEcho, k, 100);
                sendPattern(sa, rds4jPeer, k, 100);
                int want = k;
                RdsDatagram atB = sb.receive(Duration.ofSeconds(30)).orElseThrow(() -> new AssertionError("message "
                        + want + " never reached the rds4j host over TLS\n" + diagnostics(a)));
                assertEquals(k, PayloadPattern.claimedSequence(atB.payload()));
                sendPattern(sb, at(low, 5750), k, 100);
                boolean fromKernel = false;
                boolean fromPeer = false;
                for (int i = 0; i < 2; i++) {
                    RdsDatagram d = sa.receive(Duration.ofSeconds(30)).orElseThrow(() -> new AssertionError("round "
                            + want + ": an answer is missing\n" + diagnostics(a)));
                    assertEquals(k, PayloadPattern.claimedSequence(d.payload()), "round " + k + " from " + d.source());
                    fromKernel |= d.source().equals(kernelEcho);
                    fromPeer |= d.source().equals(rds4jPeer);
                }
                assertTrue(fromKernel && fromPeer, "round " + k + ": one answer from each");
            }
        } finally {
            Guest.kill("s12");
        }
        Connection toKernel = connectionTo(a);
        Connection toPeer = ((CoreStack) a).connections().stream().filter(c -> c.peer().equals(high)).findFirst()
                .orElseThrow();
        assertEquals(RdsStackConfig.RDS_TCP_PORT, toKernel.path(0).transportConnection().remoteAddress().getPort(),
                "the kernel on 16385, plain: " + toKernel.path(0).transportConnection());
        assertEquals(tlsPort, toPeer.path(0).transportConnection().remoteAddress().getPort(),
                "the rds4j host on the TLS port: " + toPeer.path(0).transportConnection());
        assertTrue(toPeer.path(0).transportConnection().toString().contains("TLS"),
                toPeer.path(0).transportConnection().toString());
        System.out.println("KERNEL-INTEROP scenario 12: 1,000 round trips each with the kernel (plain, port "
                + RdsStackConfig.RDS_TCP_PORT + ") and an rds4j host (TLS, port " + tlsPort + ") from one stack");
    }

    /** A stack on {@code address} with the suite's settings over what {@code b} already has. */
    private RdsStack stackWith(InetAddress address, RdsStackConfig.Builder b) {
        RdsStack s = RdsStack.create(b.name("rds4j-" + address.getHostAddress()).address(address)
                .defaultTransport("tcp").build());
        stacks.add(s);
        return s;
    }

    // ------------------------------------------------------------------------------------------------ scenario 9

    @Test
    @Order(90)
    @DisplayName("scenario 9: rds4j info --pid shows a running rds4j recv's connection to the kernel up, sequence"
            + " numbers moving")
    void infoShowsARecvProcessConnectedToTheKernel() throws Exception {
        int count = 2_000_000;
        // A real second JVM, started as ./rds4j starts one (the tools' Main on the tools' class path), in this
        // namespace; this JVM's stacks are all closed, so it may be 10.213.0.1 on port 16385.
        try (ToolJvm recv = ToolJvm.start("recv", "--bind", low.getHostAddress() + ":4900", "--count",
                Integer.toString(count), "--timeout", "280")) {
            recv.awaitLine("recv: listening on " + low.getHostAddress() + ":4900", Duration.ofSeconds(60));
            Guest.start("s9-tx", "rdsagent send " + guest.getHostAddress() + ":5900 " + low.getHostAddress()
                    + ":4900 " + count + " 100 280");
            try {
                long first = upRowNextRx(recv.pid(), -1);
                long later = upRowNextRx(recv.pid(), first);
                System.out.println("KERNEL-INTEROP scenario 9: rds4j info saw NextRX " + first + " then " + later);
                try (ToolJvm all = ToolJvm.start("info", "--pid", Long.toString(recv.pid()))) {
                    assertEquals(0, all.awaitExit(Duration.ofSeconds(60)), all.output());
                    System.out.println("KERNEL-INTEROP scenario 9: rds4j info --pid " + recv.pid() + ":\n"
                            + all.output());
                    assertTrue(all.output().contains("\nTCP Connections:\n"), all.output());
                }
            } finally {
                Guest.kill("s9-tx");
            }
        }
    }

    /**
     * Runs {@code rds4j info --pid PID -n} until its line for 10.213.0.1 to the guest shows the path connected
     * (flag C) with NextRX above {@code above}; returns that NextRX.
     */
    private static long upRowNextRx(long pid, long above) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        String last = "";
        while (System.nanoTime() < deadline) {
            try (ToolJvm info = ToolJvm.start("info", "--pid", Long.toString(pid), "-n")) {
                assertEquals(0, info.awaitExit(Duration.ofSeconds(60)), info.output());
                last = info.output();
            }
            for (String line : last.split("\n")) {
                String[] f = line.trim().split("\\s+");
                if (f.length >= 6 && f[0].equals(low.getHostAddress()) && f[1].equals(guest.getHostAddress())
                        && f[4].endsWith("C") && f[5].equals("tcp") && Long.parseLong(f[3]) > above) {
                    return Long.parseLong(f[3]);
                }
            }
        }
        throw new AssertionError("rds4j info never showed " + low.getHostAddress() + " -> " + guest.getHostAddress()
                + " up with NextRX above " + above + " within 120 s; last output:\n" + last);
    }
}
