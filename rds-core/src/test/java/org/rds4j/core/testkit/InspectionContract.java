package org.rds4j.core.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import javax.management.MBeanAttributeInfo;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import javax.management.openmbean.CompositeData;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.rds4j.RdsCongestionMapInfo;
import org.rds4j.RdsConnectionInfo;
import org.rds4j.RdsDatagram;
import org.rds4j.RdsPathInfo;
import org.rds4j.RdsSocket;
import org.rds4j.RdsSocketInfo;
import org.rds4j.RdsSocketOptions;
import org.rds4j.RdsStack;
import org.rds4j.RdsStackConfig;
import org.rds4j.RdsStackInfo;
import org.rds4j.core.stack.CoreStack;

/**
 * {@link RdsStack#info()} and the stack's JMX MBean (docs/inspection.md) while traffic flows between two hosts: the
 * snapshots are taken from a third thread as a monitoring poll would take them, and every documented attribute is
 * read through the platform MBean server and must move with the traffic.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
public abstract class InspectionContract extends HostsContract {
    /** Every attribute docs/inspection.md documents, in its order. */
    static final List<String> ATTRIBUTES = List.of("Name", "Generation", "Counters", "CounterNames",
            "Connections", "Sockets", "CongestionMaps", "OffHeap");
    static final Set<String> PATH_ITEMS = Set.of("local", "peer", "transport", "path", "state", "nextTxSequence",
            "nextRxSequence", "queuedMessages", "queuedBytes", "unackedMessages", "unackedBytes", "resets",
            "peerPaths", "peerGeneration", "transportLocalAddress", "transportLocalPort", "transportRemoteAddress",
            "transportRemotePort");
    static final Set<String> SOCKET_ITEMS = Set.of("boundAddress", "boundPort", "transport", "sendBudget",
            "receiveBudget", "sendQueuedBytes", "sendQueuedMessages", "receiveQueuedBytes", "receiveQueuedMessages",
            "congestionMonitor", "congestionMask", "congested");
    static final Set<String> MAP_ITEMS = Set.of("address", "local", "congestedPorts");

    private final List<AutoCloseable> closeables = new ArrayList<>();
    private Traffic traffic;

    @AfterEach
    void closeAll() throws Exception {
        if (traffic != null) {
            traffic.stop();
        }
        for (int i = closeables.size() - 1; i >= 0; i--) {
            closeables.get(i).close();
        }
    }

    private RdsStack stack(String name, InetAddress address, int index) throws IOException {
        RdsStack s = newStack(name, address, index);
        closeables.add(s);
        return s;
    }

    private RdsSocket socket(RdsStack stack, InetAddress address, int port) throws IOException {
        RdsSocket s = stack.openSocket();
        closeables.add(s);
        s.bind(new InetSocketAddress(address, port));
        return s;
    }

    @Test
    void infoShowsTheConnectionUpWithSequenceNumbersThatMoveWhileTrafficFlows() throws Exception {
        RdsStack a = stack("inspect-a", addressA(), 0);
        RdsStack b = stack("inspect-b", addressB(), 1);
        RdsSocket sender = socket(a, addressA(), 4100);
        RdsSocket receiver = socket(b, addressB(), 4200);
        traffic = Traffic.start(sender, receiver);
        traffic.awaitReceived(100);

        RdsPathInfo first = path(a.info(), addressA(), addressB());
        assertEquals(RdsPathInfo.State.UP, first.state());
        InetAddress la = addressA();
        InetAddress lb = addressB();
        waitUntil(() -> Long.compareUnsigned(path(a.info(), la, lb).nextTxSequence(), first.nextTxSequence()) > 0,
                "the next tx sequence moves");
        RdsStackInfo later = a.info();
        RdsPathInfo second = path(later, addressA(), addressB());
        assertTrue(Long.compareUnsigned(second.nextTxSequence(), first.nextTxSequence()) > 0,
                "next tx sequence did not move: " + first + " then " + second);
        assertTrue(second.index() >= 0 && second.index() < 8, "a lane of the 8: " + second);
        assertTrue(second.resets() == 0, "no reset expected: " + second);
        RdsConnectionInfo bSide = connection(b.info(), addressB(), addressA());
        assertTrue(bSide.paths().stream().anyMatch(p -> Long.compareUnsigned(p.nextRxSequence(), 0) > 0),
                "B received nothing? " + bSide);

        RdsConnectionInfo conn = connection(later, addressA(), addressB());
        assertEquals(transport(), conn.transport());
        assertEquals(8, conn.peerPaths(), "an rds4j peer offers its 8 paths in the probe: " + conn);
        assertTrue(conn.peerGeneration() != 0, "the probe's pong carries the peer's GEN_NUM: " + conn);
        assertEquals(((CoreStack) b).generation(), conn.peerGeneration());
        assertNotNull(second.transportLocal(), "an up path has a transport connection");
        assertEquals(addressA(), second.transportLocal().getAddress());
        assertEquals(addressB(), second.transportRemote().getAddress());

        RdsSocketInfo s = socketInfo(later, new InetSocketAddress(addressA(), 4100));
        assertEquals(transport(), s.transport());
        assertEquals(RdsStackConfig.DEFAULT_SOCKET_BUFFER / 2, s.sendBudget());
        assertEquals(RdsStackConfig.DEFAULT_SOCKET_BUFFER / 2, s.receiveBudget());
        assertTrue(s.sendQueuedBytes() >= 0 && s.sendQueuedBytes() <= s.sendBudget() + 1024, s.toString());
        assertEquals(a.config().name(), later.name());
        assertTrue(later.counters().get("send_queued") > 0, later.counters().toString());
        assertEquals(a.config().offHeapBytes(), later.memory().bound(), later.memory().toString());
        assertTrue(later.memory().highWater() >= later.memory().inUse(), later.memory().toString());
        assertTrue(later.congestionMaps().stream().anyMatch(m -> m.local() && m.address().equals(sender
                .localAddress().getAddress())), "A's own map: " + later.congestionMaps());
        InetAddress peerB = addressB();
        assertTrue(later.congestionMaps().stream().anyMatch(m -> !m.local() && m.address().equals(peerB)),
                "B's map as A keeps it: " + later.congestionMaps());
        assertThrows(UnsupportedOperationException.class, () -> later.connections().clear(), "immutable");
        assertThrows(UnsupportedOperationException.class, () -> later.counters().put("x", 1L), "immutable");
        traffic.check();
    }

    /** Snapshots from another thread in a tight loop while traffic flows: no error, and every message arrives. */
    @Test
    void snapshotsTakenInALoopDisturbNothing() throws Exception {
        RdsStack a = stack("inspect-a", addressA(), 0);
        RdsStack b = stack("inspect-b", addressB(), 1);
        RdsSocket sender = socket(a, addressA(), 4100);
        RdsSocket receiver = socket(b, addressB(), 4200);
        traffic = Traffic.start(sender, receiver);
        long snapshots = 0;
        long target = traffic.received() + 20_000;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (traffic.received() < target) {
            assertTrue(System.nanoTime() < deadline, "traffic stalled after " + traffic.received() + " messages");
            RdsStackInfo ia = a.info();
            RdsStackInfo ib = b.info();
            for (RdsConnectionInfo c : ia.connections()) {
                for (RdsPathInfo p : c.paths()) {
                    assertTrue(p.queuedMessages() >= 0 && p.unackedMessages() >= 0 && p.queuedBytes() >= 0
                            && p.unackedBytes() >= 0, p.toString());
                }
            }
            assertEquals(2, ib.sockets().size() + ia.sockets().size());
            snapshots++;
        }
        traffic.check();
        assertTrue(snapshots > 0);
    }

    @Test
    void aCongestedPortShowsInTheSocketAndInBothMaps() throws Exception {
        RdsStack a = stack("inspect-a", addressA(), 0);
        RdsStack b = stack("inspect-b", addressB(), 1);
        RdsSocket sender = socket(a, addressA(), 4100);
        RdsSocket receiver = b.openSocket();
        closeables.add(receiver);
        receiver.setOption(RdsSocketOptions.SO_RCVBUF, 16_384);
        receiver.bind(new InetSocketAddress(addressB(), 4200));
        InetSocketAddress to = receiver.localAddress();
        sender.setOption(RdsSocketOptions.RDS_CONG_MONITOR, true);
        sender.configureBlocking(false);
        ByteBuffer payload = ByteBuffer.allocate(1000);
        int sent = 0;
        while (true) {
            assertTrue(sent < 10_000, "the receiver's port never became congested");
            try {
                sender.send(payload.clear(), to);
                sent++;
            } catch (org.rds4j.EnobufsException refused) {
                break;
            } catch (org.rds4j.EagainException full) {
                assertTrue(sender.awaitSent(Duration.ofSeconds(30)), "the send buffer never drained");
            }
        }
        RdsSocketInfo r = socketInfo(b.info(), to);
        assertTrue(r.congested(), r.toString());
        assertEquals(16_384, r.receiveBudget());
        assertTrue(r.receiveQueuedBytes() > r.receiveBudget(), r.toString());
        assertEquals(r.receiveQueuedBytes(), r.receiveQueuedMessages() * 1000L, r.toString());
        assertEquals(List.of(4200), map(b.info(), addressB(), true).congestedPorts());
        assertEquals(List.of(4200), map(a.info(), addressB(), false).congestedPorts());
        RdsSocketInfo s = socketInfo(a.info(), sender.localAddress());
        assertTrue(s.congestionMonitor());
        assertEquals(1L << (4200 % 64), s.congestionMask(), s.toString());

        while (receiver.receive(Duration.ofMillis(0)).isPresent()) {
            // drain: the port clears
        }
        InetAddress peerB = addressB();
        waitUntil(() -> map(a.info(), peerB, false).congestedPorts().isEmpty(), "A sees the port clear");
        RdsSocketInfo cleared = socketInfo(b.info(), to);
        assertFalse(cleared.congested(), cleared.toString());
        assertEquals(0, cleared.receiveQueuedMessages());
    }

    // ------------------------------------------------------------------------------------------------ JMX

    @Test
    void everyDocumentedAttributeReadsThroughThePlatformMBeanServerAndMoves() throws Exception {
        RdsStack a = stack("inspect-jmx-a", addressA(), 0);
        RdsStack b = stack("inspect-jmx-b", addressB(), 1);
        RdsSocket sender = socket(a, addressA(), 4100);
        RdsSocket receiver = socket(b, addressB(), 4200);
        MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        ObjectName name = ((CoreStack) a).mbeanName();
        assertNotNull(name, "JMX is on by default");
        assertEquals("org.rds4j", name.getDomain());
        assertEquals("Stack", name.getKeyProperty("type"));
        assertTrue(server.isRegistered(name));
        List<String> declared = Arrays.stream(server.getMBeanInfo(name).getAttributes())
                .map(MBeanAttributeInfo::getName).toList();
        assertEquals(ATTRIBUTES, declared, "the MBean's attributes are the documented ones");

        traffic = Traffic.start(sender, receiver);
        traffic.awaitReceived(100);
        Map<String, Object> before = readAll(server, name);
        // The sender has up to its send budget (~400 messages) numbered ahead of the receiver: wait until more is.
        long tx0 = (Long) pathRow((CompositeData[]) before.get("Connections"), addressB()).get("nextTxSequence");
        InetAddress peerB = addressB();
        waitUntil(() -> (Long) pathRow(attribute(server, name, "Connections"), peerB).get("nextTxSequence") > tx0,
                "nextTxSequence moves");
        Map<String, Object> after = readAll(server, name);

        assertTrue(((String) after.get("Name")).startsWith("inspect-jmx-a"));
        assertEquals(((CoreStack) a).generation(), after.get("Generation"));
        CompositeData c0 = (CompositeData) before.get("Counters");
        CompositeData c1 = (CompositeData) after.get("Counters");
        assertEquals(a.counters().keySet(), c1.getCompositeType().keySet(), "every counter, by kernel name");
        // Waited for, as the sequence is: a full local build once read the counter unchanged right after the
        // sequence had moved (the loopback transport; the row with most traffic need not be the row of tx0).
        long queued0 = (Long) c0.get("send_queued");
        waitUntil(() -> (Long) counters(server, name).get("send_queued") > queued0, "send_queued moves");
        assertEquals(List.copyOf(a.counters().keySet()), List.of((String[]) after.get("CounterNames")),
                "the kernel's order");

        CompositeData p1 = pathRow((CompositeData[]) after.get("Connections"), addressB());
        assertEquals(PATH_ITEMS, p1.getCompositeType().keySet());
        assertEquals("UP", p1.get("state"));
        assertEquals(transport(), p1.get("transport"));
        assertTrue((Long) p1.get("nextTxSequence") > tx0, "nextTxSequence moves");
        assertEquals(((CoreStack) b).generation(), p1.get("peerGeneration"));
        assertEquals(8, p1.get("peerPaths"));
        assertTrue((Integer) p1.get("transportRemotePort") > 0);

        ObjectName bName = ((CoreStack) b).mbeanName();
        InetAddress peerA = addressA();
        long rx0 = (Long) pathRow(attribute(server, bName, "Connections"), peerA).get("nextRxSequence");
        waitUntil(() -> (Long) pathRow(attribute(server, bName, "Connections"), peerA).get("nextRxSequence") > rx0,
                "nextRxSequence moves");

        CompositeData[] sockets = (CompositeData[]) after.get("Sockets");
        assertEquals(1, sockets.length);
        assertEquals(SOCKET_ITEMS, sockets[0].getCompositeType().keySet());
        assertEquals(4100, sockets[0].get("boundPort"));
        assertEquals((long) RdsStackConfig.DEFAULT_SOCKET_BUFFER / 2, sockets[0].get("sendBudget"));
        CompositeData[] maps = (CompositeData[]) after.get("CongestionMaps");
        assertTrue(maps.length >= 2, "A's own map and B's: " + Arrays.toString(maps));
        assertEquals(MAP_ITEMS, maps[0].getCompositeType().keySet());
        assertTrue((Boolean) maps[0].get("local"));
        assertEquals(0, ((int[]) maps[0].get("congestedPorts")).length);
        CompositeData memory = (CompositeData) after.get("OffHeap");
        assertEquals(Set.of("bound", "inUse", "highWater", "refusals"), memory.getCompositeType().keySet());
        assertEquals(a.config().offHeapBytes(), memory.get("bound"));
        assertTrue((Long) memory.get("highWater") >= (Long) memory.get("inUse"), memory.toString());
        assertEquals(0L, memory.get("refusals"), memory.toString());
        traffic.check();

        a.close();
        assertFalse(server.isRegistered(name), "closing the stack unregisters its MBean");
    }

    @Test
    void jmxCanBeTurnedOffAndStacksWithOneNameGetTheirOwnMBean() throws Exception {
        RdsStack a = stack("inspect-same", addressA(), 0);
        RdsStack b = stack("inspect-same", addressB(), 1);
        ObjectName na = ((CoreStack) a).mbeanName();
        ObjectName nb = ((CoreStack) b).mbeanName();
        assertNotNull(na);
        assertNotNull(nb);
        assertFalse(na.equals(nb), na + " and " + nb);
        assertEquals("inspect-same", ManagementFactory.getPlatformMBeanServer().getAttribute(nb, "Name"));
        RdsStack quiet = RdsStack.create(RdsStackConfig.builder().name("inspect-quiet").jmx(false)
                .defaultTransport(transport()).build());
        closeables.add(quiet);
        assertNull(((CoreStack) quiet).mbeanName());
        assertTrue(ManagementFactory.getPlatformMBeanServer()
                .queryNames(new ObjectName("org.rds4j:type=Stack,name=inspect-quiet*"), null).isEmpty());
    }

    // ------------------------------------------------------------------------------------------------ helpers

    private static Map<String, Object> readAll(MBeanServer server, ObjectName name) throws Exception {
        Map<String, Object> values = new java.util.LinkedHashMap<>();
        for (String attribute : ATTRIBUTES) {
            Object v = server.getAttribute(name, attribute);
            assertNotNull(v, attribute);
            values.put(attribute, v);
        }
        return values;
    }

    private static CompositeData[] attribute(MBeanServer server, ObjectName name, String attribute) {
        try {
            return (CompositeData[]) server.getAttribute(name, attribute);
        } catch (javax.management.JMException e) {
            throw new AssertionError("cannot read " + attribute + " of " + name, e);
        }
    }

    private static CompositeData counters(MBeanServer server, ObjectName name) {
        try {
            return (CompositeData) server.getAttribute(name, "Counters");
        } catch (javax.management.JMException e) {
            throw new AssertionError("cannot read Counters of " + name, e);
        }
    }

    /** The row of the path to {@code peer} that carries the traffic: of the connection's 8, the one that sent most. */
    private static CompositeData pathRow(CompositeData[] rows, InetAddress peer) {
        CompositeData best = null;
        for (CompositeData r : rows) {
            if (r.get("peer").equals(peer.getHostAddress())
                    && (best == null || (Long) r.get("nextTxSequence") > (Long) best.get("nextTxSequence"))) {
                best = r;
            }
        }
        return best != null ? best : fail("no path to " + peer + " in " + Arrays.toString(rows));
    }

    private static RdsConnectionInfo connection(RdsStackInfo info, InetAddress local, InetAddress peer) {
        for (RdsConnectionInfo c : info.connections()) {
            if (c.local().equals(local) && c.peer().equals(peer)) {
                return c;
            }
        }
        return fail("no connection " + local + " -> " + peer + " in " + info);
    }

    private static RdsPathInfo path(RdsStackInfo info, InetAddress local, InetAddress peer) {
        RdsConnectionInfo c = connection(info, local, peer);
        assertEquals(8, c.paths().size(), "a connection has the 8 paths the stacks offer: " + c);
        RdsPathInfo busiest = c.paths().get(0);
        for (RdsPathInfo p : c.paths()) {
            if (p.nextTxSequence() > busiest.nextTxSequence()) {
                busiest = p;                           // the traffic's lane
            }
        }
        return busiest;
    }

    private static RdsSocketInfo socketInfo(RdsStackInfo info, InetSocketAddress bound) {
        return info.sockets().stream().filter(s -> bound.equals(s.boundAddress())).findFirst()
                .orElseGet(() -> fail("no socket " + bound + " in " + info.sockets()));
    }

    private static RdsCongestionMapInfo map(RdsStackInfo info, InetAddress address, boolean local) {
        return info.congestionMaps().stream().filter(m -> m.local() == local && m.address().equals(address))
                .findFirst().orElseGet(() -> fail("no " + (local ? "local" : "peer") + " map of " + address + " in "
                        + info.congestionMaps()));
    }

    private static void waitUntil(BooleanSupplier condition, String what) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                fail("timed out waiting until " + what);
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
        }
    }

    /** A sender thread and a receiver thread: blocking sends of 256 bytes, blocking receives, until stopped. */
    static final class Traffic {
        private final AtomicBoolean running = new AtomicBoolean(true);
        private final AtomicLong received = new AtomicLong();
        private final AtomicReference<Throwable> failure = new AtomicReference<>();
        private final Object progress = new Object();
        private final Thread sendThread;
        private final Thread receiveThread;

        private Traffic(RdsSocket sender, RdsSocket receiver) {
            InetSocketAddress to = receiver.localAddress();
            sendThread = new Thread(() -> {
                ByteBuffer b = ByteBuffer.allocate(256);
                try {
                    while (running.get()) {
                        sender.send(b.clear(), to);
                    }
                } catch (IOException | RuntimeException e) {
                    if (running.get()) {
                        failure.compareAndSet(null, e);
                    }
                }
            }, "inspection-sender");
            receiveThread = new Thread(() -> {
                try {
                    while (running.get()) {
                        Optional<RdsDatagram> d = receiver.receive(Duration.ofMillis(100));
                        if (d.isPresent() && d.get().kind() == RdsDatagram.Kind.DATA) {
                            received.incrementAndGet();
                            synchronized (progress) {
                                progress.notifyAll();
                            }
                        }
                    }
                } catch (IOException | RuntimeException e) {
                    if (running.get()) {
                        failure.compareAndSet(null, e);
                    }
                }
            }, "inspection-receiver");
        }

        static Traffic start(RdsSocket sender, RdsSocket receiver) {
            Traffic t = new Traffic(sender, receiver);
            t.sendThread.setDaemon(true);
            t.receiveThread.setDaemon(true);
            t.sendThread.start();
            t.receiveThread.start();
            return t;
        }

        long received() {
            return received.get();
        }

        void awaitReceived(long n) throws InterruptedException {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            synchronized (progress) {
                while (received.get() < n) {
                    check();
                    long left = deadline - System.nanoTime();
                    if (left <= 0) {
                        fail("only " + received.get() + " of " + n + " messages arrived within 30 s");
                    }
                    TimeUnit.NANOSECONDS.timedWait(progress, Math.min(left, TimeUnit.MILLISECONDS.toNanos(100)));
                }
            }
        }

        void check() {
            Throwable t = failure.get();
            if (t != null) {
                throw new AssertionError("traffic failed: " + t, t);
            }
        }

        void stop() throws InterruptedException {
            running.set(false);
            sendThread.interrupt();
            sendThread.join(10_000);
            receiveThread.join(10_000);
        }
    }
}
