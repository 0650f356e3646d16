package org.rds4j.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.rds4j.core.spi.RdsTransport;
import org.rds4j.core.spi.TransportConnection;
import org.rds4j.core.wire.RdsHeader;

@Timeout(120)
class TcpTransportTest {

    @AfterEach
    void noLeaks() {
        LeakRecorder.assertNoLeaks();
    }

    private static void noViolations(RecordingHandler... hs) {
        for (RecordingHandler h : hs) {
            assertTrue(h.violations.isEmpty(), () -> "violations: " + h.violations);
        }
    }

    @Test
    void foundByServiceLoader() {
        RdsTransport t = ServiceLoader.load(RdsTransport.class).stream().map(ServiceLoader.Provider::get)
                .filter(x -> x.name().equals("tcp")).findFirst().orElseThrow();
        assertInstanceOf(TcpTransport.class, t);
        assertEquals(10, t.defaultPriority());
    }

    @Test
    void leakDetectionIsOn() {
        assertTrue(LeakRecorder.installed(), "the recording leak detector is not installed");
        // A deliberate leak must be seen, or the other tests' leak checks prove nothing.
        io.netty.buffer.PooledByteBufAllocator.DEFAULT.directBuffer(64).writeInt(1);
        List<String> leaks = LeakRecorder.collect();
        assertFalse(leaks.isEmpty(), "a deliberately leaked buffer went unnoticed");
    }

    @Test
    void framesOfEverySizeArriveByteExact() throws Exception {
        try (Stacks s = new Stacks()) {
            RecordingHandler[] p = s.connect();
            RecordingHandler client = p[0];
            RecordingHandler server = p[1];
            int[] sizes = {0, 1, 100, 4096, 65536, 1 << 20, 0, 48, 65536 - 48, 65536 - 96, 3};
            ByteArrayOutputStream expected = new ByteArrayOutputStream();
            for (int i = 0; i < sizes.length; i++) {
                ByteBuffer[] f = RecordingHandler.frame(i + 1, RecordingHandler.payload(i, sizes[i]), i);
                RecordingHandler.append(expected, f);
                client.outbox.add(f);
            }
            client.connection.requestTransmit();
            byte[] want = expected.toByteArray();
            assertEquals(want.length, server.awaitReceived(want.length, Stacks.WAIT));
            assertEquals(want.length, client.awaitTransmitted(want.length, Stacks.WAIT));
            byte[] got = server.received();
            assertArrayEquals(want, got);
            List<RecordingHandler.Message> msgs = RecordingHandler.decode(got);
            assertEquals(sizes.length, msgs.size());
            for (int i = 0; i < sizes.length; i++) {
                RdsHeader h = msgs.get(i).header();
                assertEquals(i + 1, h.sequence());
                assertEquals(sizes[i], h.length());
                assertEquals(5000, h.destinationPort());
                assertArrayEquals(RecordingHandler.payload(i, sizes[i]), msgs.get(i).payload());
            }
            // and the other way
            ByteBuffer[] back = RecordingHandler.frame(99, RecordingHandler.payload(99, 777), 1);
            ByteArrayOutputStream b = new ByteArrayOutputStream();
            RecordingHandler.append(b, back);
            server.outbox.add(back);
            server.connection.requestTransmit();
            assertEquals(48 + 777, client.awaitReceived(48 + 777, Stacks.WAIT));
            assertArrayEquals(b.toByteArray(), client.received());
            noViolations(client, server);
            assertEquals(0, client.closedCalls.get());
        }
    }

    @Test
    void readsGoStraightIntoTheCoresBufferAndNeverPastThePayload() throws Exception {
        readsInPlace(Map.of());
    }

    @Test
    void readsInPlaceWithNio() throws Exception {
        readsInPlace(Map.of("tcp.native", "false"));
    }

    /**
     * The core asks for large payloads to be read into its own direct buffers ({@code ReadTarget}): the stream is
     * byte exact, most of a 1 MiB payload comes in place, no read passes a payload's end into the bytes after it,
     * and the wrapper the transport reads through is made once per buffer.
     */
    private void readsInPlace(Map<String, String> props) throws Exception {
        try (Stacks s = new Stacks(props)) {
            RecordingHandler[] p = s.connect();
            RecordingHandler client = p[0];
            RecordingHandler server = p[1];
            int[] sizes = {1 << 20, 100, 65536, 3 * 65536 + 5, 1 << 20, 0, 200_000};
            ByteArrayOutputStream expected = new ByteArrayOutputStream();
            long offset = 0;
            for (int i = 0; i < sizes.length; i++) {
                ByteBuffer[] f = RecordingHandler.frame(i + 1, RecordingHandler.payload(i, sizes[i]), i);
                if (sizes[i] >= 65536) {
                    server.readInPlace(offset + RdsHeader.SIZE, sizes[i]);
                }
                offset += RdsHeader.SIZE + sizes[i];
                RecordingHandler.append(expected, f);
                client.outbox.add(f);
            }
            client.connection.requestTransmit();
            byte[] want = expected.toByteArray();
            assertEquals(want.length, server.awaitReceived(want.length, Stacks.WAIT));
            assertArrayEquals(want, server.received());
            noViolations(client, server);
            assertTrue(server.inPlaceBytes.get() > (1 << 20), "bytes read in place: " + server.inPlaceBytes);
            for (RecordingHandler.InPlace t : server.inPlaceDone) {
                assertTrue(t.canaryIntact(), "a read went past the payload's end at stream offset " + t.start);
            }
            assertEquals(server.inPlaceDone.size(), server.attachCalls.get(),
                    "one wrapper per buffer, over " + server.inPlaceReads + " reads in place");
        }
    }

    @Test
    void manySmallFramesInManyTransmitCalls() throws Exception {
        try (Stacks s = new Stacks()) {
            RecordingHandler[] p = s.connect();
            RecordingHandler client = p[0];
            RecordingHandler server = p[1];
            int n = 100_000;
            for (int i = 0; i < 5_000; i++) {
                client.framesPerCall.add(1 + (i * 37) % 150);     // about 1,300 transmit calls
            }
            ByteArrayOutputStream expected = new ByteArrayOutputStream();
            long start = System.nanoTime();
            for (int i = 0; i < n; i++) {
                ByteBuffer[] f = RecordingHandler.frame(i + 1, RecordingHandler.payload(i, i % 97), i);
                RecordingHandler.append(expected, f);
                client.outbox.add(f);
                if (i % 64 == 63) {
                    client.connection.requestTransmit();
                }
            }
            client.connection.requestTransmit();
            byte[] want = expected.toByteArray();
            assertEquals(want.length, server.awaitReceived(want.length, Stacks.WAIT));
            assertEquals(want.length, client.awaitTransmitted(want.length, Stacks.WAIT));
            long ns = System.nanoTime() - start;
            System.out.printf("%d frames, %d bytes in %d transmit calls, %.1f ms (%.0f frames/s)%n", n, want.length,
                    client.transmitCalls.get(), ns / 1e6, n / (ns / 1e9));
            assertArrayEquals(want, server.received());
            List<RecordingHandler.Message> msgs = RecordingHandler.decode(server.received());
            assertEquals(n, msgs.size());
            for (int i = 0; i < n; i++) {
                assertEquals(i + 1, msgs.get(i).header().sequence());
            }
            assertTrue(client.transmitCalls.get() > 1000, "transmit calls: " + client.transmitCalls.get());
            noViolations(client, server);
        }
    }

    @Test
    void backPressureStopsAndResumesTransmit() throws Exception {
        try (Stacks s = new Stacks(Map.of("tcp.lowWaterMark", "32768", "tcp.highWaterMark", "131072"))) {
            RecordingHandler[] p = s.connect();
            RecordingHandler client = p[0];
            RecordingHandler server = p[1];
            CountDownLatch hold = new CountDownLatch(1);
            server.holdFirstRead = hold;       // the receiver stops reading: kernel buffers fill, then ours
            ByteArrayOutputStream expected = new ByteArrayOutputStream();
            int frames = 48;                    // 48 MiB: far more than the kernel buffers hold
            for (int i = 0; i < frames; i++) {
                ByteBuffer[] f = RecordingHandler.frame(i + 1, RecordingHandler.payload(i, 1 << 20), i);
                RecordingHandler.append(expected, f);
                client.outbox.add(f);
            }
            client.connection.requestTransmit();
            // Wait until the sender stopped because the connection was not writable.
            long deadline = System.nanoTime() + Stacks.WAIT.toNanos();
            while (client.unwritableStops.get() == 0 && System.nanoTime() < deadline) {
                client.awaitTransmitted(Long.MAX_VALUE, java.time.Duration.ofMillis(10));
            }
            assertTrue(client.unwritableStops.get() > 0, "the sink never turned unwritable");
            int callsWhileBlocked = client.transmitCalls.get();
            hold.countDown();
            byte[] want = expected.toByteArray();
            assertEquals(want.length, server.awaitReceived(want.length, Stacks.WAIT));
            assertEquals(want.length, client.awaitTransmitted(want.length, Stacks.WAIT));
            assertArrayEquals(want, server.received());
            // Only one requestTransmit came from the test: later calls came from writability turning back on.
            assertTrue(client.transmitCalls.get() > callsWhileBlocked, "transmit was not called again when writable");
            noViolations(client, server);
        }
    }

    @Test
    void refusedConnectionIsReset() throws Exception {
        try (Stacks s = new Stacks()) {
            s.srvHost.acceptor = c -> null;
            RecordingHandler client = new RecordingHandler("cli");
            s.cli.connect(Stacks.CLIENT, Stacks.SERVER, -1, client);
            // The reset can beat the connect's completion (it does with epoll): then the connect fails; otherwise
            // the connection comes up and closes with the reset. Both are what TCP allows, and the core handles both.
            Object first = CompletableFuture.anyOf(client.connected, client.connectFailed).get(20, TimeUnit.SECONDS);
            Throwable cause;
            if (first instanceof TransportConnection) {
                TransportConnection c = (TransportConnection) first;
                client.outbox.add(RecordingHandler.frame(1, new byte[10], 0));
                c.requestTransmit();
                cause = client.closed.get(20, TimeUnit.SECONDS);
            } else {
                cause = (Throwable) first;
            }
            assertInstanceOf(IOException.class, cause, "a reset is reported as an IOException");
            TransportConnection refused = s.srvHost.acceptCalls.poll(20, TimeUnit.SECONDS);
            assertNotNull(refused);
            assertEquals(Stacks.SERVER, refused.localAddress().getAddress());
            assertEquals(Stacks.CLIENT, refused.remoteAddress().getAddress());
            assertTrue(s.srvHost.acceptThreads.poll().startsWith("rds4j-srv-tcp-"));
            assertTrue(s.accepted.isEmpty());
            noViolations(client);
        }
    }

    @Test
    void abortResetsThePeer() throws Exception {
        try (Stacks s = new Stacks()) {
            RecordingHandler[] p = s.connect();
            p[1].connection.abort();
            Throwable peer = p[0].closed.get(20, TimeUnit.SECONDS);
            assertInstanceOf(IOException.class, peer, "the peer of an abort sees a reset");
            assertNull(p[1].closed.get(20, TimeUnit.SECONDS), "a local abort is not an error");
            noViolations(p);
            assertEquals(1, p[0].closedCalls.get());
            assertEquals(1, p[1].closedCalls.get());
        }
    }

    @Test
    void closeIsOrderlyForBothSides() throws Exception {
        try (Stacks s = new Stacks()) {
            RecordingHandler[] p = s.connect();
            ByteBuffer[] f = RecordingHandler.frame(1, RecordingHandler.payload(1, 5000), 0);
            p[0].outbox.add(f);
            p[0].connection.requestTransmit();
            assertEquals(5048, p[1].awaitReceived(5048, Stacks.WAIT));
            p[0].connection.close();
            assertNull(p[1].closed.get(20, TimeUnit.SECONDS));
            assertNull(p[0].closed.get(20, TimeUnit.SECONDS));
            p[0].connection.close();       // again: harmless
            p[0].connection.abort();
            p[0].connection.requestTransmit();
            noViolations(p);
            assertEquals(1, p[0].closedCalls.get());
            assertEquals(1, p[1].closedCalls.get());
        }
    }

    @Test
    void closingTheInstanceClosesItsConnections() throws Exception {
        Stacks s = new Stacks();
        try {
            RecordingHandler[] p = s.connect();
            s.srv.close();
            assertNull(p[1].closed.get(20, TimeUnit.SECONDS));
            assertNull(p[0].closed.get(20, TimeUnit.SECONDS));
            noViolations(p);
            RecordingHandler late = new RecordingHandler("cli");
            s.cli.connect(Stacks.CLIENT, Stacks.SERVER, -1, late);
            assertNotNull(late.connectFailed.get(20, TimeUnit.SECONDS));
            assertThrows(IOException.class, () -> s.srv.listen(Stacks.SERVER));
        } finally {
            s.close();
        }
    }

    @Test
    void connectToNoListenerFails() throws Exception {
        try (TestHost host = new TestHost(TestHost.config("cli", Stacks.freePort()).build())) {
            TcpTransportInstance t = (TcpTransportInstance) new TcpTransport().open(host);
            try {
                RecordingHandler client = new RecordingHandler("cli");
                t.connect(Stacks.CLIENT, Stacks.SERVER, -1, client);
                assertInstanceOf(IOException.class, client.connectFailed.get(20, TimeUnit.SECONDS));
                assertFalse(client.connected.isDone());
            } finally {
                t.close();
            }
        }
    }

    @Test
    void listenOnABusyPortNamesAddressAndPort() throws Exception {
        InetAddress a = Stacks.SERVER;
        try (ServerSocket busy = new ServerSocket(0, 1, a);
                TestHost host = new TestHost(TestHost.config("busy", busy.getLocalPort()).build())) {
            TcpTransportInstance t = (TcpTransportInstance) new TcpTransport().open(host);
            try {
                IOException e = assertThrows(IOException.class, () -> t.listen(a));
                assertTrue(e.getMessage().contains("127.0.0.2"), e.getMessage());
                assertTrue(e.getMessage().contains(Integer.toString(busy.getLocalPort())), e.getMessage());
            } finally {
                t.close();
            }
        }
    }

    @Test
    void canBind() throws Exception {
        try (TestHost host = new TestHost(TestHost.config("bind", 1).build())) {
            TcpTransportInstance t = (TcpTransportInstance) new TcpTransport().open(host);
            try {
                assertTrue(t.canBind(TestHost.addr("127.0.0.2")));
                assertTrue(t.canBind(TestHost.addr("127.0.0.1")));
                assertTrue(t.canBind(TestHost.addr("127.255.0.9")));
                assertTrue(t.canBind(TestHost.addr("::1")));
                assertFalse(t.canBind(TestHost.addr("0.0.0.0")));
                assertFalse(t.canBind(TestHost.addr("::")));
                assertFalse(t.canBind(TestHost.addr("224.0.0.1")));
                assertFalse(t.canBind(TestHost.addr("192.0.2.77")));     // TEST-NET-1: never a local address
                assertFalse(t.canBind(null));
            } finally {
                t.close();
            }
        }
    }

    @Test
    void nioCanBeForcedAndThreadsAreNamed() throws Exception {
        try (Stacks s = new Stacks(Map.of("tcp.native", "false", "tcp.ioThreads", "2"))) {
            assertFalse(s.srv.isNative());
            RecordingHandler[] p = s.connect();
            p[0].outbox.add(RecordingHandler.frame(1, new byte[1], 0));
            p[0].connection.requestTransmit();
            assertEquals(49, p[1].awaitReceived(49, Stacks.WAIT));
            noViolations(p);        // checks every call ran on one rds4j-<stack>-tcp-<n> thread
        }
    }

    /**
     * With several I/O threads, every connection between the same two addresses, opened or accepted, is served by
     * the one thread the core is told owns that pair ({@code ioThread(local, peer)}): the core's connection to a
     * peer keeps its paths' state on that thread alone.
     */
    @Test
    void eachPairOfAddressesHasOneIoThreadOnBothSides() throws Exception {
        try (Stacks s = new Stacks(Map.of("tcp.ioThreads", "4"))) {
            List<InetAddress> servers = List.of(Stacks.SERVER, TestHost.addr("127.0.0.3"), TestHost.addr("127.0.0.4"),
                    TestHost.addr("127.0.0.5"), TestHost.addr("127.0.0.6"));
            for (InetAddress a : servers.subList(1, servers.size())) {
                s.srv.listen(a);
            }
            for (InetAddress server : servers) {
                Thread cliOwner = threadOf(s.cli.ioThread(Stacks.CLIENT, server));
                Thread srvOwner = threadOf(s.srv.ioThread(server, Stacks.CLIENT));
                for (int path = 0; path < 3; path++) {
                    RecordingHandler client = new RecordingHandler("cli");
                    s.cli.connect(Stacks.CLIENT, server, path, client);
                    client.connected.get(Stacks.WAIT.toSeconds(), TimeUnit.SECONDS);
                    RecordingHandler accepted = s.accepted.poll(Stacks.WAIT.toSeconds(), TimeUnit.SECONDS);
                    assertNotNull(accepted, "no connection accepted on " + server);
                    client.outbox.add(RecordingHandler.frame(path + 1, new byte[100], 0));
                    client.connection.requestTransmit();
                    accepted.awaitReceived(RdsHeader.SIZE + 100, Stacks.WAIT);
                    assertEquals(cliOwner, client.ioThread(), "client side of path " + path + " to " + server);
                    assertEquals(srvOwner, accepted.ioThread(), "accepted side of path " + path + " on " + server);
                    noViolations(client, accepted);
                }
            }
        }
    }

    /** The thread an {@link org.rds4j.core.spi.IoThread} runs its tasks on. */
    private static Thread threadOf(org.rds4j.core.spi.IoThread io) throws Exception {
        CompletableFuture<Thread> t = new CompletableFuture<>();
        io.execute(() -> t.complete(Thread.currentThread()));
        Thread thread = t.get(Stacks.WAIT.toSeconds(), TimeUnit.SECONDS);
        assertFalse(io.inThread(), "the test's thread is no I/O thread");
        return thread;
    }

    @Test
    void badPropertiesAreRefused() {
        for (Map<String, String> props : List.of(Map.of("tcp.ioThreads", "0"), Map.of("tcp.ioThreads", "x"),
                Map.of("tcp.lowWaterMark", "2000000"), Map.of("tcp.callerIo", "yes"))) {
            var b = TestHost.config("bad", 1);
            props.forEach(b::property);
            try (TestHost host = new TestHost(b.build())) {
                assertThrows(IllegalArgumentException.class, () -> new TcpTransport().open(host));
            }
        }
    }
}
