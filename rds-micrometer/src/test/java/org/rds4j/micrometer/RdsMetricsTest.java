package org.rds4j.micrometer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.config.NamingConvention;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.rds4j.RdsSocket;
import org.rds4j.RdsStack;
import org.rds4j.RdsStackConfig;

/**
 * The binder over two loopback stacks on IPv6 addresses: Micrometer's naming, units and meter types; counters and
 * gauges that follow the traffic; meters of connections and addresses that come and go without a call to refresh.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RdsMetricsTest {
    private RdsStack a;
    private RdsStack b;
    private RdsMetrics metrics;

    @AfterEach
    void close() {
        if (metrics != null) {
            metrics.close();
        }
        if (a != null) {
            a.close();
        }
        if (b != null) {
            b.close();
        }
    }

    private static RdsStack stack(String name, InetAddress address) {
        return RdsStack.create(RdsStackConfig.builder().name(name).address(address).defaultTransport("loopback")
                .paths(8).build());
    }

    private static void waitUntil(BooleanSupplier condition, String what) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                fail("not within 30 s: " + what);
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
        }
    }

    @Test
    void namesUnitsAndTypesFollowMicrometersConventions() throws Exception {
        InetAddress la = InetAddress.getByName("fd00:0:0:0:0:0:0:1");
        InetAddress lb = InetAddress.getByName("fd00:0:0:0:0:0:0:2");
        a = stack("conv-a", la);
        b = stack("conv-b", lb);
        try (RdsSocket tx = a.openSocket(); RdsSocket rx = b.openSocket()) {
            tx.bind(new InetSocketAddress(la, 0));                   // an ephemeral port: never a tag value
            rx.bind(new InetSocketAddress(lb, 4200));
            tx.send(ByteBuffer.allocate(100), rx.localAddress());
            assertTrue(rx.receive(Duration.ofSeconds(30)).isPresent());
            SimpleMeterRegistry registry = new SimpleMeterRegistry();
            metrics = new RdsMetrics(a, Tags.of("app", "test"), Duration.ZERO);
            metrics.bindTo(registry);

            for (Meter m : registry.getMeters()) {
                Meter.Id id = m.getId();
                String name = id.getName();
                assertTrue(name.matches("rds(\\.[a-z0-9]+)+"), "dotted lower case: " + name);
                assertEquals(name, NamingConvention.dot.name(name, id.getType(), id.getBaseUnit()), name);
                assertFalse(name.contains("bytes") || name.contains("sequence"), "no unit or identifier in " + name);
                String snake = NamingConvention.snakeCase.name(name, id.getType(), id.getBaseUnit());
                assertFalse(snake.contains("__"), snake);
                for (Tag t : id.getTags()) {
                    assertFalse(t.getKey().equals("port") || t.getKey().equals("path"), name + " tagged " + t);
                    assertFalse(t.getValue().equals(Integer.toString(tx.localAddress().getPort())),
                            name + " carries the ephemeral port: " + t);
                }
                assertEquals("conv-a", id.getTag("stack"), name);
                assertEquals("test", id.getTag("app"), name);
            }
            // every kernel counter is a function counter; those of bytes and messages say so as their base unit
            for (String kernel : a.counters().keySet()) {
                FunctionCounter c = registry.get(RdsMetrics.counterName(kernel)).functionCounter();
                String unit = c.getId().getBaseUnit();
                if (kernel.contains("bytes")) {
                    assertEquals("bytes", unit, kernel);
                }
            }
            assertEquals("rds.recv.queued", RdsMetrics.counterName("recv_queued"));
            assertEquals("rds.recv.added.to.sock", RdsMetrics.counterName("recv_bytes_added_to_sock"));
            assertEquals("messages", registry.get("rds.send.queued").functionCounter().getId().getBaseUnit());
            assertEquals("bytes", registry.get("rds.recv.added.to.sock").functionCounter().getId().getBaseUnit());
            // what only grows is a counter; what goes up and down a gauge
            assertTrue(registry.get("rds.path.resets").meter() instanceof FunctionCounter);
            assertTrue(registry.get("rds.path.up").meter() instanceof Gauge);
            assertEquals("bytes", registry.get("rds.path.unacked.payload").gauge().getId().getBaseUnit());
            assertEquals("messages", registry.get("rds.path.unacked").gauge().getId().getBaseUnit());
            assertEquals("bytes", registry.get("rds.socket.receive.queued").gauge().getId().getBaseUnit());
            assertNull(registry.find("rds.path.next.tx.sequence").meter(), "sequence numbers are not exported");
        }
    }

    @Test
    void metersOfNewConnectionsAndAddressesAppearAndGoWithoutRefresh() throws Exception {
        InetAddress la = InetAddress.getByName("fd00:0:0:0:0:0:0:1");
        InetAddress lb = InetAddress.getByName("fd00:0:0:0:0:0:0:2");
        a = stack("metrics-a", la);
        b = stack("metrics-b", lb);
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        metrics = new RdsMetrics(a, Tags.of("app", "test"), Duration.ZERO, Duration.ofMillis(20));
        metrics.bindTo(registry);

        FunctionCounter queued = registry.get("rds.send.queued").tags("stack", "metrics-a", "app", "test")
                .functionCounter();
        assertEquals(0.0, queued.count());
        assertEquals(0.0, registry.get("rds.connections").gauge().value());
        assertNull(registry.find("rds.path.up").gauge(), "no connection yet");

        RdsSocket tx = a.openSocket();
        tx.bind(new InetSocketAddress(la, 4100));
        RdsSocket rx = b.openSocket();
        rx.bind(new InetSocketAddress(lb, 4200));
        for (int i = 0; i < 20; i++) {
            tx.send(ByteBuffer.allocate(100), rx.localAddress());
        }
        for (int i = 0; i < 20; i++) {
            assertTrue(rx.receive(Duration.ofSeconds(30)).isPresent());
        }
        assertTrue(queued.count() >= 20.0, "20 messages, and the stack's own pings: " + queued.count());
        long direct = a.counters().get("send_queued");
        double bound = queued.count();
        assertTrue(bound >= direct && bound <= a.counters().get("send_queued"),
                "the binder reads the stack's counter: " + direct + ", then " + bound);
        assertEquals(1.0, registry.get("rds.connections").gauge().value());
        assertEquals(1.0, registry.get("rds.sockets").gauge().value());

        // No refresh() called: the binder's own thread registers the connection's and the address's meters.
        Tags connection = Tags.of("local", "fd00::1", "peer", "fd00::2", "transport", "loopback");
        waitUntil(() -> registry.find("rds.path.up").tags(connection).gauge() != null, "the connection's meters");
        Gauge up = registry.get("rds.path.up").tags(connection).gauge();
        waitUntil(() -> up.value() == 8.0, "eight paths up, read " + up.value());
        assertEquals(0.0, registry.get("rds.path.resets").tags(connection).functionCounter().count());
        Gauge unacked = registry.get("rds.path.unacked").tags(connection).gauge();
        waitUntil(() -> unacked.value() == 0.0, "every message acknowledged");

        Tags address = Tags.of("address", "fd00::1");
        waitUntil(() -> registry.find("rds.socket.bound").tags(address).gauge() != null, "the address's meters");
        assertEquals(1.0, registry.get("rds.socket.bound").tags(address).gauge().value());
        assertEquals(0.0, registry.get("rds.socket.congested").tags(address).gauge().value());
        assertEquals(0.0, registry.get("rds.socket.receive.messages").tags(address).gauge().value());

        tx.close();
        waitUntil(() -> registry.find("rds.socket.bound").tags(address).gauge() == null,
                "a closed socket's address meters go, without refresh()");
        rx.close();
    }

    @Test
    void closeStopsTheBindersThread() throws Exception {
        a = stack("metrics-close", InetAddress.getByName("fd00:0:0:0:0:0:0:3"));
        metrics = new RdsMetrics(a, Tags.empty(), Duration.ZERO, Duration.ofMillis(20));
        metrics.bindTo(new SimpleMeterRegistry());
        assertTrue(thread("rds4j-micrometer-metrics-close"), "the refreshing thread runs");
        metrics.close();
        waitUntil(() -> !thread("rds4j-micrometer-metrics-close"), "the refreshing thread ends on close");
    }

    private static boolean thread(String name) {
        for (Map.Entry<Thread, StackTraceElement[]> e : Thread.getAllStackTraces().entrySet()) {
            if (e.getKey().getName().equals(name) && e.getKey().isAlive()) {
                return true;
            }
        }
        return false;
    }
}
