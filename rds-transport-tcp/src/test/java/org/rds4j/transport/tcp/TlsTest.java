package org.rds4j.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.rds4j.RdsDatagram;
import org.rds4j.RdsSocket;
import org.rds4j.RdsSocketOptions;
import org.rds4j.RdsStack;
import org.rds4j.RdsStackConfig;
import org.rds4j.RdsTlsConfig;
import org.rds4j.core.stack.CoreStack;
import org.rds4j.core.path.Connection;
import org.rds4j.core.spi.TransportConnection;
import org.rds4j.core.testkit.TestTls;

/**
 * TLS between rds4j hosts (docs/security.md, "TLS between rds4j hosts"), over real TCP on loopback, with the key material of
 * {@link TestTls} (a test CA, two nodes it signed, a rogue node it did not): two hosts exchange
 * 100,000 messages with mutual authentication; a host without a trusted certificate, and a plain connection from a
 * host that must use TLS, are refused with a clear log line; a plain peer outside the TLS prefixes (as a kernel host
 * would be) keeps working with the same stack on the RDS/TCP port.
 */
class TlsTest {
    private static final Duration WAIT = Duration.ofSeconds(20);
    private static final InetAddress A = address("127.0.31.1");
    private static final InetAddress B = address("127.0.31.2");
    private static final InetAddress PLAIN = address("127.0.31.3");

    private final List<RdsStack> stacks = new ArrayList<>();

    @AfterEach
    void closeAndCheckLeaks() {
        stacks.forEach(RdsStack::close);
        LeakRecorder.assertNoLeaks();
    }

    @Test
    void twoHostsExchange100000MessagesOverTlsWithMutualAuthentication() throws Exception {
        int[] ports = TcpHosts.twoFreePorts();
        int tcpPort = ports[0];
        int tlsPort = ports[1];
        RdsStack a = stack("tls-a", A, tcpPort, tls("node-a", tlsPort));
        RdsStack b = stack("tls-b", B, tcpPort, tls("node-b", tlsPort));
        RdsSocket out = socket(a, A, 4000);
        RdsSocket in = socket(b, B, 4001);
        int count = 100_000;
        ByteBuffer m = ByteBuffer.allocate(64);
        long[] received = new long[1];
        Throwable[] failure = new Throwable[1];
        Thread receiver = new Thread(() -> {
            try {
                for (long k = 0; k < count; k++) {
                    RdsDatagram d = in.receive(WAIT).orElseThrow(() -> new AssertionError("message "
                            + received[0] + " never arrived"));
                    assertEquals(new InetSocketAddress(A, 4000), d.source());
                    assertEquals(k, d.payload().getLong(d.payload().position()), "message " + k + " out of order");
                    received[0]++;
                }
            } catch (Throwable t) {
                failure[0] = t;
            }
        }, "tls-receiver");
        receiver.start();
        for (long k = 0; k < count; k++) {
            m.clear().putLong(0, k);
            out.send(m, new InetSocketAddress(B, 4001));   // blocking: waits for budget
        }
        assertTrue(out.awaitSent(WAIT), "not all acknowledged");
        receiver.join(TimeUnit.SECONDS.toMillis(60));
        if (failure[0] != null) {
            throw new AssertionError("the receiver failed after " + received[0] + " messages", failure[0]);
        }
        assertEquals(count, received[0]);
        // Every path between them is a TLS connection to the TLS port.
        Connection c = connection(a, B);
        for (int i = 0; i < c.lanes(); i++) {
            TransportConnection tc = c.path(i).transportConnection();
            if (tc != null) {
                assertEquals(tlsPort, tc.remoteAddress().getPort(), "path " + i + ": " + tc);
                assertTrue(tc.toString().contains("TLS"), tc.toString());
            }
        }
    }

    @Test
    void aHostWithoutATrustedCertificateIsRefusedWithAClearLogLine() throws Exception {
        int[] ports = TcpHosts.twoFreePorts();
        int tcpPort = ports[0];
        int tlsPort = ports[1];
        try (StderrCapture log = new StderrCapture()) {
            RdsStack a = stack("tls-victim", A, tcpPort, tls("node-a", tlsPort));
            // The rogue trusts our CA (so it would talk to us) but its own certificate is self-signed.
            RdsStack rogue = stack("tls-rogue", B, tcpPort, tls("rogue", tlsPort));
            RdsSocket in = socket(a, A, 4100);
            RdsSocket out = socket(rogue, B, 4101);
            out.send(ByteBuffer.allocate(8), new InetSocketAddress(A, 4100));
            log.awaitContains("stack tls-victim: refused a TLS connection from 127.0.31.2:", WAIT);
            assertTrue(log.text().contains("A peer must present a certificate this stack's trust store trusts"),
                    log.text());
            assertTrue(in.receive(Duration.ofMillis(500)).isEmpty(), "a message got through without a trusted"
                    + " certificate");
            assertTrue(((CoreStack) a).connections().stream().noneMatch(c -> c.peer().equals(B)),
                    "the victim kept state for the rogue");
        }
    }

    @Test
    void aPlainConnectionFromAHostThatMustUseTlsIsRefused() throws Exception {
        int[] ports = TcpHosts.twoFreePorts();
        int tcpPort = ports[0];
        int tlsPort = ports[1];
        try (StderrCapture log = new StderrCapture()) {
            RdsStack a = stack("tls-strict", A, tcpPort, tls("node-a", tlsPort));
            RdsStack plain = stack("plain-b", B, tcpPort, null);        // B is among A's TLS peers (all are)
            RdsSocket in = socket(a, A, 4200);
            RdsSocket out = socket(plain, B, 4201);
            out.send(ByteBuffer.allocate(8), new InetSocketAddress(A, 4200));
            log.awaitContains("stack tls-strict: refused a plain RDS/TCP connection from 127.0.31.2:", WAIT);
            assertTrue(log.text().contains("this stack requires TLS from it (RdsTlsConfig.peers) on port " + tlsPort),
                    log.text());
            assertTrue(in.receive(Duration.ofMillis(500)).isEmpty(), "a plain message got through");
        }
    }

    /** The allow-list is asked before the handshake: a peer refused anyway costs no TLS work. */
    @Test
    void aPeerOutsideTheAllowListIsRefusedBeforeAnyHandshake() throws Exception {
        int[] ports = TcpHosts.twoFreePorts();
        int tcpPort = ports[0];
        int tlsPort = ports[1];
        try (StderrCapture log = new StderrCapture()) {
            RdsStack a = RdsStack.create(RdsStackConfig.builder().name("tls-allow").address(A).tcpPort(tcpPort)
                    .defaultTransport("tcp").allowPeers(PLAIN.getHostAddress()).tls(tls("node-a", tlsPort)).build());
            stacks.add(a);
            RdsStack b = stack("tls-outsider", B, tcpPort, tls("node-b", tlsPort));   // trusted, not allowed
            RdsSocket in = socket(a, A, 4400);
            RdsSocket out = socket(b, B, 4401);
            out.send(ByteBuffer.allocate(8), new InetSocketAddress(A, 4400));
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (a.counters().get("conn_peer_refused") == 0 && System.nanoTime() < deadline) {
                java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
            }
            assertTrue(a.counters().get("conn_peer_refused") >= 1, "refused and counted: " + a.counters());
            assertTrue(in.receive(Duration.ofMillis(500)).isEmpty(), "a message from outside the allow-list");
            assertTrue(!log.text().contains("stack tls-allow: refused a TLS connection"), "a handshake was made with"
                    + " a peer the allow-list refuses:\n" + log.text());
        }
    }

    /** A stands for a host with rds4j peers over TLS and kernel peers in plain RDS/TCP, at the same time. */
    @Test
    void aPlainPeerOutsideTheTlsPrefixesKeepsWorkingOnTheSameStack() throws Exception {
        int[] ports = TcpHosts.twoFreePorts();
        int tcpPort = ports[0];
        int tlsPort = ports[1];
        RdsStack a = stack("tls-mixed", A, tcpPort, RdsTlsConfig.builder(TestTls.context("node-a")).port(tlsPort)
                .peers(B.getHostAddress() + "/32").build());
        RdsStack b = stack("tls-mixed-b", B, tcpPort, tls("node-b", tlsPort));
        RdsStack plain = stack("plain-c", PLAIN, tcpPort, null);
        RdsSocket hub = socket(a, A, 4300);
        RdsSocket viaTls = socket(b, B, 4301);
        RdsSocket viaPlain = socket(plain, PLAIN, 4302);
        for (int round = 0; round < 100; round++) {
            for (RdsSocket s : new RdsSocket[] {viaTls, viaPlain}) {
                s.send(ByteBuffer.allocate(8).putLong(0, round), new InetSocketAddress(A, 4300));
                RdsDatagram d = hub.receive(WAIT).orElseThrow(() -> new AssertionError("nothing reached the hub"));
                assertEquals(round, d.payload().getLong(d.payload().position()));
                hub.send(ByteBuffer.allocate(8).putLong(0, round), d.source());
                RdsDatagram back = s.receive(WAIT).orElseThrow(() -> new AssertionError("no answer"));
                assertEquals(round, back.payload().getLong(back.payload().position()));
            }
        }
        assertEquals(tlsPort, connection(a, B).path(0).transportConnection().remoteAddress().getPort());
        TransportConnection plainPath = connection(a, PLAIN).path(0).transportConnection();
        assertEquals(tcpPort, plainPath.remoteAddress().getPort(), "A (the smaller) connects to C in plain"
                + " RDS/TCP: " + plainPath);
    }

    @Test
    void theTlsPortMustDifferFromTheRdsTcpPort() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> stack("same-port", A, 17001,
                tls("node-a", 17001)));
        assertTrue(e.getMessage().contains("give TLS a port of its own"), e.getMessage());
    }

    // ------------------------------------------------------------------------------------------------ helpers

    private RdsStack stack(String name, InetAddress address, int tcpPort, RdsTlsConfig tls) {
        RdsStack s = RdsStack.create(RdsStackConfig.builder().name(name).address(address).tcpPort(tcpPort)
                .reconnectDelays(Duration.ofMillis(1), Duration.ofMillis(100)).defaultTransport("tcp").tls(tls)
                .build());
        stacks.add(s);
        return s;
    }

    private static RdsSocket socket(RdsStack s, InetAddress address, int port) throws java.io.IOException {
        RdsSocket sock = s.openSocket();
        sock.setOption(RdsSocketOptions.SO_RCVBUF, 4 << 20);
        sock.setOption(RdsSocketOptions.SO_SNDBUF, 4 << 20);
        sock.setOption(RdsSocketOptions.SO_SNDTIMEO, WAIT);        // a blocking send that cannot go fails the test
        sock.bind(new InetSocketAddress(address, port));
        return sock;
    }

    private static RdsTlsConfig tls(String node, int port) throws Exception {
        return RdsTlsConfig.builder(TestTls.context(node)).port(port).build();
    }

    private static Connection connection(RdsStack s, InetAddress peer) {
        return ((CoreStack) s).connections().stream().filter(c -> c.peer().equals(peer)).findFirst()
                .orElseThrow(() -> new AssertionError("no connection to " + peer));
    }

    /**
     * Standard error copied into a buffer while open (slf4j-simple, the tests' logger, writes there), so a test can
     * wait for a log line.
     */
    private static final class StderrCapture implements AutoCloseable {
        private final PrintStream original = System.err;
        private final ByteArrayOutputStream copy = new ByteArrayOutputStream();

        StderrCapture() {
            System.setErr(new PrintStream(new OutputStream() {
                @Override
                public void write(int b) {
                    original.write(b);
                    synchronized (copy) {
                        copy.write(b);
                    }
                }

                @Override
                public void write(byte[] b, int off, int len) {
                    original.write(b, off, len);
                    synchronized (copy) {
                        copy.write(b, off, len);
                    }
                }
            }, true, StandardCharsets.UTF_8));
        }

        String text() {
            synchronized (copy) {
                return copy.toString(StandardCharsets.UTF_8);
            }
        }

        void awaitContains(String line, Duration timeout) {
            long deadline = System.nanoTime() + timeout.toNanos();
            while (!text().contains(line)) {
                if (System.nanoTime() > deadline) {
                    throw new AssertionError("no log line with \"" + line + "\" within " + timeout + "; the log:\n"
                            + text());
                }
                java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
            }
        }

        @Override
        public void close() {
            System.setErr(original);
        }
    }

    private static InetAddress address(String literal) {
        try {
            return InetAddress.getByName(literal);
        } catch (java.net.UnknownHostException e) {
            throw new AssertionError(e);
        }
    }
}
