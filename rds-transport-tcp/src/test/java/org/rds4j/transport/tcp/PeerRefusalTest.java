package org.rds4j.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import javax.management.Notification;
import javax.management.NotificationListener;
import javax.management.ObjectName;
import javax.management.openmbean.CompositeData;
import javax.net.ssl.SSLContext;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.rds4j.EaccesException;
import org.rds4j.EconnrefusedException;
import org.rds4j.RdsDatagram;
import org.rds4j.RdsPeerEvent;
import org.rds4j.RdsPeerState;
import org.rds4j.RdsSocket;
import org.rds4j.RdsSocketOptions;
import org.rds4j.RdsStack;
import org.rds4j.RdsStackConfig;
import org.rds4j.RdsTlsConfig;
import org.rds4j.core.stack.CoreStack;
import org.rds4j.core.testkit.TestTls;

/**
 * A sender whose peer refuses it, over real TCP on loopback addresses: by the peer's allow-list, by a TLS peer that
 * does not trust its certificate, and for presenting no certificate. Each time the sender's queued messages fail with
 * a notification naming the cause, its next send fails with the errno of that cause, its peer-state listener hears
 * REFUSED, and the refusing side counts every attempt. When the peer relents the sender delivers again without a
 * restart. And a peer where nothing listens is reported UNREACHABLE (by listener and JMX), its queued messages failed
 * after the unreachable timeout, and UP once a stack listens there.
 */
class PeerRefusalTest {
    /** A bound on every wait: only a broken stack needs it. */
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final int MESSAGES = 3;

    private final List<RdsStack> stacks = new ArrayList<>();

    @AfterEach
    void closeAndCheckLeaks() {
        for (int i = stacks.size() - 1; i >= 0; i--) {
            stacks.get(i).close();
        }
        LeakRecorder.assertNoLeaks();
    }

    @Test
    void aSenderRefusedByTheAllowListIsToldAndDeliversOnceThePeerRelents() throws Exception {
        InetAddress senderAddress = address("127.0.36.1");     // the smaller address: it makes the connections
        InetAddress peerAddress = address("127.0.36.2");
        int tcpPort = TcpHosts.freePort();
        RdsStack peer = stack(config("refuser", peerAddress, tcpPort).allowPeers("127.0.36.9/32"));
        RdsStack sender = stack(config("refused", senderAddress, tcpPort));
        Events events = new Events(sender);
        socket(peer, peerAddress, 5000);                       // the peer listens once a socket is bound
        RdsSocket out = socket(sender, senderAddress, 5000);
        InetSocketAddress to = new InetSocketAddress(peerAddress, 5000);

        long start = System.nanoTime();
        List<RdsDatagram> failures = sendAndAwaitFailures(out, to);
        System.out.printf("refused by the allow-list: %d queued messages failed after %d ms, %d attempts refused%n",
                MESSAGES, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start),
                sender.counters().get("conn_refused_by_peer"));
        for (RdsDatagram d : failures) {
            assertEquals(RdsDatagram.Failure.REFUSED, d.failure(), d.toString());
            assertTrue(d.failureReason().contains("allowPeers"), d.failureReason());
            assertEquals(to, d.source());
        }
        EconnrefusedException e = assertThrows(EconnrefusedException.class,
                () -> out.send(ByteBuffer.allocate(8), to));
        assertTrue(e.getMessage().contains("add 127.0.36.1 to that stack's allowPeers"), e.getMessage());
        RdsPeerEvent refused = events.await(RdsPeerState.REFUSED);
        assertEquals(peerAddress, refused.peer());
        long attempts = sender.counters().get("conn_refused_by_peer");
        assertTrue(attempts >= 3, "the sender counts its refused attempts: " + sender.counters());
        assertTrue(peer.counters().get("conn_peer_refused") >= attempts, "the refusing side counts every attempt: "
                + peer.counters() + " against the sender's " + attempts);

        // The peer relents: the same address and port, now admitting the sender. The sender is not restarted.
        peer.close();
        RdsStack relented = stack(config("relented", peerAddress, tcpPort));
        RdsSocket in = socket(relented, peerAddress, 5000);
        events.await(RdsPeerState.UP);
        out.send(ByteBuffer.allocate(8), to);       // the refusal ended before the UP event was published
        RdsDatagram d = in.receive(WAIT).orElseThrow(() -> new AssertionError("nothing delivered after the peer"
                + " relented"));
        assertEquals(RdsDatagram.Kind.DATA, d.kind());
        assertEquals(new InetSocketAddress(senderAddress, 5000), d.source());
    }

    @Test
    void aSenderWhoseCertificateThePeerDoesNotTrustIsTold() throws Exception {
        InetAddress senderAddress = address("127.0.37.1");
        InetAddress peerAddress = address("127.0.37.2");
        int[] ports = TcpHosts.twoFreePorts();
        int tcpPort = ports[0];
        int tlsPort = ports[1];
        RdsStack peer = stack(config("untrusting", peerAddress, tcpPort).tls(tls(TestTls.context("node-a"), tlsPort)));
        // The rogue trusts the test CA, so it would talk to the peer, but its own certificate is self-signed.
        RdsStack sender = stack(config("rogue", senderAddress, tcpPort).tls(tls(TestTls.context("rogue"), tlsPort)));
        assertAuthenticationRefused(peer, sender, senderAddress, peerAddress);
    }

    @Test
    void aSenderWithoutACertificateIsTold() throws Exception {
        InetAddress senderAddress = address("127.0.38.1");
        InetAddress peerAddress = address("127.0.38.2");
        int[] ports = TcpHosts.twoFreePorts();
        int tcpPort = ports[0];
        int tlsPort = ports[1];
        RdsStack peer = stack(config("demanding", peerAddress, tcpPort).tls(tls(TestTls.context("node-a"), tlsPort)));
        RdsStack sender = stack(config("anonymous", senderAddress, tcpPort).tls(tls(TestTls.withoutCertificate(), tlsPort)));
        assertAuthenticationRefused(peer, sender, senderAddress, peerAddress);
    }

    @Test
    void aPeerWhereNothingListensIsReportedUnreachableAndUpOnceItListens() throws Exception {
        InetAddress senderAddress = address("127.0.39.1");
        InetAddress peerAddress = address("127.0.39.2");
        int tcpPort = TcpHosts.freePort();
        RdsStack sender = stack(config("lonely", senderAddress, tcpPort).unreachableTimeout(Duration.ofMillis(300)));
        Events events = new Events(sender);
        BlockingQueue<Notification> jmx = new LinkedBlockingQueue<>();
        ObjectName mbean = ((CoreStack) sender).mbeanName();
        NotificationListener jmxListener = (n, handback) -> jmx.add(n);
        ManagementFactory.getPlatformMBeanServer().addNotificationListener(mbean, jmxListener, null, null);
        try {
            RdsSocket out = socket(sender, senderAddress, 5000);
            InetSocketAddress to = new InetSocketAddress(peerAddress, 5000);
            long start = System.nanoTime();
            out.send(ByteBuffer.allocate(8), to);
            RdsPeerEvent unreachable = events.await(RdsPeerState.UNREACHABLE);
            System.out.printf("a peer where nothing listens: UNREACHABLE after %d ms%n",
                    TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
            assertEquals(peerAddress, unreachable.peer());
            assertTrue(unreachable.reason().contains("made no connection"), unreachable.reason());
            Notification n = jmx.poll(WAIT.toSeconds(), TimeUnit.SECONDS);
            assertTrue(n != null, "no JMX notification");
            assertEquals("org.rds4j.peer.state", n.getType());
            assertEquals("UNREACHABLE", ((CompositeData) n.getUserData()).get("state"));

            RdsDatagram failed = out.receive(WAIT).orElseThrow(() -> new AssertionError("the queued message did not"
                    + " fail after the unreachable timeout"));
            assertEquals(RdsDatagram.Failure.UNREACHABLE, failed.failure(), failed.toString());
            assertTrue(failed.failureReason().contains("unreachable for more than 300 ms"), failed.failureReason());

            // The peer comes: the next message goes through and the peer is reported back up.
            RdsStack late = stack(config("late", peerAddress, tcpPort));
            RdsSocket in = socket(late, peerAddress, 5000);
            out.send(ByteBuffer.allocate(8), to);
            RdsPeerEvent up = events.await(RdsPeerState.UP);
            assertEquals(RdsPeerState.UNREACHABLE, up.previous());
            assertTrue(in.receive(WAIT).isPresent(), "nothing delivered once the peer listened");
        } finally {
            ManagementFactory.getPlatformMBeanServer().removeNotificationListener(mbean, jmxListener);
        }
    }

    /** Listeners run on the stack's event thread: one that blocks holds up no message, and no later listener. */
    @Test
    void aListenerThatBlocksStallsNoTraffic() throws Exception {
        InetAddress aAddress = address("127.0.40.1");
        InetAddress bAddress = address("127.0.40.2");
        int tcpPort = TcpHosts.freePort();
        RdsStack a = stack(config("patient", aAddress, tcpPort));
        RdsStack b = stack(config("busy", bAddress, tcpPort));
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch blocked = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.atomic.AtomicReference<String> thread = new java.util.concurrent.atomic.AtomicReference<>();
        a.addPeerStateListener(e -> {
            thread.set(Thread.currentThread().getName());
            blocked.countDown();
            try {
                release.await(WAIT.toSeconds(), TimeUnit.SECONDS);
            } catch (InterruptedException ie) {
                Thread.currentThread().interrupt();
            }
        });
        Events later = new Events(a);                  // added after the blocking one: told once it returns
        try {
            RdsSocket sa = socket(a, aAddress, 5000);
            RdsSocket sb = socket(b, bAddress, 5000);
            sa.send(ByteBuffer.allocate(8), sb.localAddress());
            assertTrue(blocked.await(WAIT.toSeconds(), TimeUnit.SECONDS), "the listener was not called");
            assertEquals("rds4j-patient-events", thread.get());
            for (int i = 0; i < 100; i++) {            // both ways while the listener blocks
                assertTrue(sb.receive(WAIT).isPresent(), "message " + i + " did not arrive");
                sb.send(ByteBuffer.allocate(8), sa.localAddress());
                assertTrue(sa.receive(WAIT).isPresent(), "answer " + i + " did not arrive");
                sa.send(ByteBuffer.allocate(8), sb.localAddress());
            }
        } finally {
            release.countDown();
        }
        assertEquals(bAddress, later.await(RdsPeerState.UP).peer());
    }

    // ------------------------------------------------------------------------------------------------ helpers

    private void assertAuthenticationRefused(RdsStack peer, RdsStack sender, InetAddress senderAddress,
                                             InetAddress peerAddress) throws Exception {
        Events events = new Events(sender);
        RdsSocket in = socket(peer, peerAddress, 5000);
        RdsSocket out = socket(sender, senderAddress, 5000);
        InetSocketAddress to = new InetSocketAddress(peerAddress, 5000);
        long start = System.nanoTime();
        List<RdsDatagram> failures = sendAndAwaitFailures(out, to);
        System.out.printf("%s: %d queued messages failed after %d ms, %d attempts refused%n", sender.config().name(),
                MESSAGES, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start),
                sender.counters().get("conn_refused_by_peer"));
        for (RdsDatagram d : failures) {
            assertEquals(RdsDatagram.Failure.AUTHENTICATION_FAILED, d.failure(), d.toString());
            assertTrue(d.failureReason().contains("RdsTlsConfig"), d.failureReason());
        }
        EaccesException e = assertThrows(EaccesException.class, () -> out.send(ByteBuffer.allocate(8), to));
        assertTrue(e.getMessage().contains("TLS handshake with " + peerAddress.getHostAddress() + " failed"),
                e.getMessage());
        events.await(RdsPeerState.REFUSED);
        long attempts = sender.counters().get("conn_refused_by_peer");
        assertTrue(attempts >= 3, "the sender counts its refused attempts: " + sender.counters());
        assertTrue(peer.counters().get("conn_tls_handshake_failed") >= attempts, "the refusing side counts every"
                + " handshake: " + peer.counters() + " against the sender's " + attempts);
        assertTrue(in.receive(Duration.ZERO).isEmpty(), "a message got through");
    }

    /** Queues {@link #MESSAGES} messages and returns their failure notifications. */
    private static List<RdsDatagram> sendAndAwaitFailures(RdsSocket out, InetSocketAddress to) throws IOException {
        for (int i = 0; i < MESSAGES; i++) {
            out.send(ByteBuffer.allocate(8).putLong(0, i), to);
        }
        List<RdsDatagram> failures = new ArrayList<>();
        for (int i = 0; i < MESSAGES; i++) {
            RdsDatagram d = out.receive(WAIT).orElseThrow(() -> new AssertionError("no failure notification for a"
                    + " queued message"));
            assertEquals(RdsDatagram.Kind.SEND_FAILED, d.kind(), d.toString());
            failures.add(d);
        }
        return failures;
    }

    /** The peer-state events of one stack, as its listener heard them. */
    private static final class Events {
        private final BlockingQueue<RdsPeerEvent> heard = new LinkedBlockingQueue<>();

        Events(RdsStack stack) {
            stack.addPeerStateListener(heard::add);
        }

        /** The next event into {@code state}, skipping others; fails after {@link #WAIT}. */
        RdsPeerEvent await(RdsPeerState state) throws InterruptedException {
            long deadline = System.nanoTime() + WAIT.toNanos();
            List<RdsPeerEvent> seen = new ArrayList<>();
            while (true) {
                RdsPeerEvent e = heard.poll(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                if (e == null) {
                    throw new AssertionError("no " + state + " event within " + WAIT + "; heard " + seen);
                }
                if (e.state() == state) {
                    return e;
                }
                seen.add(e);
            }
        }
    }

    private RdsStack stack(RdsStackConfig.Builder b) {
        RdsStack s = RdsStack.create(b.build());
        stacks.add(s);
        return s;
    }

    private static RdsStackConfig.Builder config(String name, InetAddress address, int tcpPort) {
        return RdsStackConfig.builder().name(name).address(address).tcpPort(tcpPort).defaultTransport("tcp")
                .reconnectDelays(Duration.ofMillis(1), Duration.ofMillis(100));
    }

    private static RdsSocket socket(RdsStack s, InetAddress address, int port) throws IOException {
        RdsSocket sock = s.openSocket();
        sock.setOption(RdsSocketOptions.RDS_RECVERR, true);
        sock.setOption(RdsSocketOptions.SO_SNDTIMEO, WAIT);
        sock.bind(new InetSocketAddress(address, port));
        return sock;
    }

    private static RdsTlsConfig tls(SSLContext context, int port) {
        return RdsTlsConfig.builder(context).port(port).build();
    }

    private static InetAddress address(String literal) {
        try {
            return InetAddress.getByName(literal);
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }
}
