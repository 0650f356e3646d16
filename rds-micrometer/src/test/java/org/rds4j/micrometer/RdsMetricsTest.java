package org.rds4j.micrometer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.rds4j.RdsSocket;
import org.rds4j.RdsStack;
import org.rds4j.RdsStackConfig;

/** The binder over two loopback stacks on IPv6 addresses: counters, path and socket gauges, rows that come and go. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RdsMetricsTest {
    private RdsStack a;
    private RdsStack b;

    @AfterEach
    void close() {
        if (a != null) {
            a.close();
        }
        if (b != null) {
            b.close();
        }
    }

    private static RdsStack stack(String name, InetAddress address) {
        // One path: the test follows path 0's gauges as messages move (with 8, a socket's later messages take its lane).
        return RdsStack.create(RdsStackConfig.builder().name(name).address(address).defaultTransport("loopback")
                .paths(1)
                .build());
    }

    @Test
    void countersAndGaugesFollowTheTraffic() throws Exception {
        InetAddress la = InetAddress.getByName("fd00:0:0:0:0:0:0:1");
        InetAddress lb = InetAddress.getByName("fd00:0:0:0:0:0:0:2");
        a = stack("metrics-a", la);
        b = stack("metrics-b", lb);
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        RdsMetrics metrics = new RdsMetrics(a, Tags.of("app", "test"), Duration.ZERO);
        metrics.bindTo(registry);

        FunctionCounter queued = registry.get("rds.send_queued").tags("stack", "metrics-a", "app", "test")
                .functionCounter();
        assertEquals(0.0, queued.count());
        assertEquals(0.0, registry.get("rds.connections").gauge().value());
        assertNull(registry.find("rds.path.next.tx.sequence").gauge(), "no path yet");

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
        // The stack keeps queueing its own pings and acknowledgements meanwhile: the binder's reading must lie
        // between two of the stack's own, not equal one taken at another moment (a CI run under load saw 20 and 21).
        long direct = a.counters().get("send_queued");
        double bound = queued.count();
        assertTrue(bound >= direct && bound <= a.counters().get("send_queued"),
                "the binder reads the stack's counter: " + direct + ", then " + bound);
        assertEquals(1.0, registry.get("rds.connections").gauge().value());
        assertEquals(1.0, registry.get("rds.sockets").gauge().value());

        metrics.refresh();
        Tags path = Tags.of("local", "fd00::1", "peer", "fd00::2", "transport", "loopback", "path", "0");
        Gauge up = registry.get("rds.path.up").tags(path).gauge();
        assertEquals(1.0, up.value());
        Gauge nextTx = registry.get("rds.path.next.tx.sequence").tags(path).gauge();
        double tx0 = nextTx.value();
        assertTrue(tx0 >= 21, "20 messages and the probe were numbered: " + tx0);
        tx.send(ByteBuffer.allocate(100), rx.localAddress());
        assertTrue(rx.receive(Duration.ofSeconds(30)).isPresent());
        assertTrue(nextTx.value() > tx0, "the gauge reads the stack, not a copy");
        assertEquals(0.0, registry.get("rds.path.resets").tags(path).gauge().value());
        assertNotNull(registry.get("rds.path.unacked.bytes").tags(path).gauge());
        assertNotNull(registry.get("rds.path.queued.messages").tags(path).gauge());

        Tags socket = Tags.of("address", "fd00::1", "port", "4100");
        assertEquals(RdsStackConfig.DEFAULT_SOCKET_BUFFER / 2,
                registry.get("rds.socket.send.budget").tags(socket).gauge().value());
        assertEquals(0.0, registry.get("rds.socket.congested").tags(socket).gauge().value());
        assertEquals(0.0, registry.get("rds.socket.receive.queued.messages").tags(socket).gauge().value());

        tx.close();
        metrics.refresh();
        assertNull(registry.find("rds.socket.send.budget").tags(socket).gauge(), "a closed socket's row goes");
        rx.close();
    }
}
