package org.rds4j.core.stack;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.rds4j.EagainException;
import org.rds4j.RdsDatagram;
import org.rds4j.RdsMessageInfo;
import org.rds4j.RdsSocket;
import org.rds4j.RdsSocketOptions;
import org.rds4j.RdsStackConfig;
import org.rds4j.core.stack.RdsCounters.Counter;
import org.rds4j.core.cong.CongestionMap;
import org.rds4j.core.path.Connection;
import org.rds4j.core.wire.ExtensionHeaders;
import org.rds4j.core.wire.FrameDecoder;
import org.rds4j.core.wire.RdsHeader;
import org.rds4j.core.wire.RdsProtocolException;

/**
 * Coverage-guided fuzzing of a path's receive state machine (docs/security.md, "Fuzzing"): a real {@link CoreStack} with three
 * bound sockets, driven only through the transport SPI ({@link FuzzTransport}), and a peer whose every move the
 * fuzzer picks: data frames with any sequence number, h_ack, flags, ports, length and extension area; pings, probes
 * carrying NPATHS and GEN_NUM, pongs; congestion maps of any bits and length; raw bytes; headers announcing more than
 * 1 MiB, or a payload that never completes; bytes cut anywhere; transmit passes of any size; sends from our sockets;
 * the peer closing and reconnecting.
 *
 * <p>Beside the stack runs a model of what the kernel's rules (docs/protocol.md, docs/reliability.md) make of the
 * same bytes: its own reading of each connection's stream, the duplicate rule and next expected number across
 * reconnects, the reset of that number when the peer's GEN_NUM changes, where a too-long h_len ends the stream. After
 * each input it must hold that
 * <ul>
 *   <li>no exception left any SPI call (a protocol error drops the connection inside the core, counted once);</li>
 *   <li>each socket received exactly the messages the model says, in order, each once, with their bytes and source
 *       port: no duplicate, no reordering, no loss, nothing for an unbound port, no congestion map as data;</li>
 *   <li>the peer's congestion map is the last whole map the peer sent; its NPATHS as read stays within 1..8;</li>
 *   <li>what the path holds stays bounded by what the input asked of it (messages queued at most: our sends, plus
 *       one pong per ping, plus a few of the protocol's own), and everything it wrote is well-formed RDS: lengths
 *       within 1 MiB, maps of 8192 bytes, pongs only to ports that pinged;</li>
 *   <li>the stack closes cleanly. A hang is caught by the per-input timeout (10 s, rds-core/pom.xml).</li>
 * </ul>
 */
class PathFuzzTest {
    static final InetAddress PEER = address(10, 98, 0, 1);      // the smaller address: it connects to us
    static final InetAddress LOCAL = address(10, 98, 0, 2);
    static final int[] PORTS = {4000, 4001, 4002};                // 4002 has a small SO_RCVBUF: it congests
    static final int UNBOUND = 4003;
    static final long CAP = CoreStack.MAX_MESSAGE_SIZE;
    static final int MAX_OPS = 64;
    /** One receive buffer for the JVM: the fuzz test runs on one thread. */
    private static final ByteBuffer RECEIVED = ByteBuffer.allocate(CoreStack.MAX_MESSAGE_SIZE);

    @FuzzTest
    void peerDrivesThePath(FuzzedDataProvider data) throws Exception {
        try (CoreStack stack = new CoreStack(RdsStackConfig.builder().name("fuzz").address(LOCAL)
                // no timer-driven reconnects or liveness drops while an input runs: the fuzzer decides every event
                .reconnectDelays(java.time.Duration.ofHours(1), java.time.Duration.ofHours(1))
                // One path: the model numbers one sequence space. With the default 8, a probe with NPATHS > 1 let
                // the next connection land on path 1, which numbers on its own (the fuzzer found the model wrong
                // there); where connections land is MultipathTest's and the kernel suite's to check.
                .paths(1).build())) {
            new Run(stack, FuzzTransport.install(stack)).run(data);
        }
    }

    /** One message a socket received or must receive. */
    record Message(int sourcePort, byte[] payload) {
        @Override
        public boolean equals(Object o) {
            return o instanceof Message m && m.sourcePort == sourcePort && Arrays.equals(m.payload, payload);
        }

        @Override
        public int hashCode() {
            return sourcePort * 31 + Arrays.hashCode(payload);
        }

        @Override
        public String toString() {
            return "from " + sourcePort + ": " + payload.length + " bytes";
        }
    }

    /** The stack, the peer's moves and the model for one input. */
    static final class Run {
        final CoreStack stack;
        final FuzzTransport transport;
        final RdsSocket[] sockets = new RdsSocket[PORTS.length];
        final List<List<Message>> expected = new ArrayList<>();
        final List<List<Message>> received = new ArrayList<>();
        final ByteArrayOutputStream pending = new ByteArrayOutputStream();
        final RdsHeader header = new RdsHeader();
        final ByteBuffer headerBytes = ByteBuffer.allocate(RdsHeader.SIZE);
        FuzzTransport.Conn conn;
        /**
         * Connections the peer opened while {@link #conn} was up: the core keeps them aside, unread, and the next one
         * takes the path when {@code conn} closes. The peer writes only to the connection the core reads.
         */
        final List<FuzzTransport.Conn> waiting = new ArrayList<>();
        StreamModel stream;
        int nextPeerPort = 50000;
        // the model
        long nextRx;
        long peerGeneration;
        byte[] peerMap;
        long protocolErrors;
        long pings;
        long sends;
        final Set<Integer> pingedFrom = new HashSet<>();

        Run(CoreStack stack, FuzzTransport transport) throws IOException {
            this.stack = stack;
            this.transport = transport;
            for (int i = 0; i < PORTS.length; i++) {
                RdsSocket s = stack.openSocket();
                s.setOption(RdsSocketOptions.SO_RDS_TRANSPORT, FuzzTransport.NAME);
                if (i == 2) {
                    s.setOption(RdsSocketOptions.SO_RCVBUF, 2048);
                }
                s.bind(new InetSocketAddress(LOCAL, PORTS[i]));
                s.configureBlocking(false);
                sockets[i] = s;
                expected.add(new ArrayList<>());
                received.add(new ArrayList<>());
            }
        }

        void run(FuzzedDataProvider data) throws IOException {
            accept();
            for (int op = 0; op < MAX_OPS && data.remainingBytes() > 0; op++) {
                switch (data.consumeInt(0, 12)) {
                    case 0 -> dataFrame(data);
                    case 1 -> ping(data);
                    case 2 -> pong(data);
                    case 3 -> congestionMap(data);
                    case 4 -> pending.writeBytes(data.consumeBytes(data.consumeInt(1, 96)));
                    case 5 -> frame(data.consumeLong(), 0, data.consumeInt(0, 255), data.consumeInt(0, 65535),
                            data.consumeInt(0, 65535), data.consumeLong(CAP + 1, 0xFFFF_FFFFL), ext(data),
                            new byte[0]);                 // more than any sender may send: a protocol error
                    case 6 -> frame(nextRx, 0, 0, data.consumeInt(2, 65535), port(data),
                            data.consumeInt(65, 70_000), ext(data), data.consumeBytes(data.consumeInt(0, 64)));
                    case 7 -> feed(data.consumeInt(1, 512));
                    case 8 -> pump(data.consumeInt(0, 8));
                    case 9 -> drain(data.consumeInt(0, PORTS.length - 1));
                    case 10 -> send(data);
                    case 11 -> peerCloses(data.consumeBoolean());
                    default -> accept();
                }
                waitingTakesThePath();
                checkBounded();
            }
            finish();
        }

        // -------------------------------------------------------------------------------------------- peer moves

        private void dataFrame(FuzzedDataProvider data) {
            long seq = switch (data.consumeInt(0, 4)) {
                case 0 -> nextRx;                                       // in order
                case 1 -> nextRx - 1 - data.consumeInt(0, 3);           // a duplicate or older
                case 2 -> nextRx + 1 + data.consumeInt(0, 3);           // a gap
                case 3 -> 0;
                default -> data.consumeLong();
            };
            int flags = switch (data.consumeInt(0, 4)) {
                case 0 -> 0;
                case 1 -> RdsHeader.FLAG_RETRANSMITTED;
                case 2 -> RdsHeader.FLAG_ACK_REQUIRED;
                case 3 -> RdsHeader.FLAG_CONG_BITMAP;                   // a "map" with a data length
                default -> data.consumeInt(0, 255);
            };
            long ack = data.consumeBoolean() ? 0 : data.consumeBoolean() ? data.consumeInt(1, 64) : data.consumeLong();
            int sport = data.consumeBoolean() ? 7000 + data.consumeInt(0, 3) : data.consumeInt(0, 65535);
            byte[] payload = data.consumeBytes(data.consumeInt(0, 200));
            frame(seq, ack, flags, sport, port(data), payload.length, ext(data), payload);
        }

        private void ping(FuzzedDataProvider data) {
            int sport = switch (data.consumeInt(0, 3)) {
                case 0 -> 1;                                            // the multipath probe
                case 1 -> 0;                                            // an ack-only message
                case 2 -> PORTS[data.consumeInt(0, PORTS.length - 1)];
                default -> data.consumeInt(0, 65535);
            };
            frame(data.consumeBoolean() ? nextRx : data.consumeLong(), 0,
                    data.consumeBoolean() ? 0 : RdsHeader.FLAG_RETRANSMITTED, sport, 0, 0, ext(data), new byte[0]);
        }

        private void pong(FuzzedDataProvider data) {
            int[] ackPorts = stack.ackPorts(LOCAL, 1);
            int dport = switch (data.consumeInt(0, 2)) {
                case 0 -> 1;                                            // the answer to our probe
                case 1 -> ackPorts[data.consumeInt(0, ackPorts.length - 1)];
                default -> data.consumeInt(0, 65535);
            };
            frame(nextRx, data.consumeBoolean() ? 0 : data.consumeInt(1, 64), 0, 0, dport, 0, ext(data), new byte[0]);
        }

        private void congestionMap(FuzzedDataProvider data) {
            byte[] map = new byte[data.consumeBoolean() ? CongestionMap.BYTES : data.consumeInt(0, 9000)];
            int bits = data.consumeInt(0, 8);
            for (int i = 0; i < bits && map.length > 0; i++) {
                int p = data.consumeInt(0, 65535);
                if ((p >>> 3) < map.length) {
                    map[p >>> 3] |= (byte) (1 << (p & 7));
                }
            }
            int flags = data.consumeBoolean() ? RdsHeader.FLAG_CONG_BITMAP : data.consumeInt(0, 255);
            frame(data.consumeBoolean() ? 0 : data.consumeLong(), 0, flags, 0, data.consumeBoolean() ? 0 : port(data),
                    map.length, new byte[RdsHeader.EXTHDR_SIZE], map);
        }

        private int port(FuzzedDataProvider data) {
            return switch (data.consumeInt(0, 5)) {
                case 0, 1, 2 -> PORTS[data.consumeInt(0, PORTS.length - 1)];
                case 3 -> UNBOUND;
                case 4 -> 0;
                default -> data.consumeInt(0, 65535);
            };
        }

        /** An extension area: empty, the handshake's entries with chosen values, or any 16 bytes. */
        private static byte[] ext(FuzzedDataProvider data) {
            byte[] area = new byte[RdsHeader.EXTHDR_SIZE];
            switch (data.consumeInt(0, 3)) {
                case 0 -> { }
                case 1 -> {
                    ExtensionHeaders.add(area, ExtensionHeaders.NPATHS, data.consumeInt(0, 65535),
                            ExtensionHeaders.AddMode.APPEND);
                    ExtensionHeaders.add(area, ExtensionHeaders.GEN_NUM, data.consumeInt(0, 3),
                            ExtensionHeaders.AddMode.APPEND);
                }
                case 2 -> {
                    for (int i = data.consumeInt(1, 4); i > 0; i--) {
                        ExtensionHeaders.add(area, data.consumeInt(0, 16), data.consumeLong(),
                                ExtensionHeaders.AddMode.APPEND);
                    }
                }
                default -> {
                    byte[] raw = data.consumeBytes(RdsHeader.EXTHDR_SIZE);
                    System.arraycopy(raw, 0, area, 0, raw.length);
                }
            }
            return area;
        }

        /** Appends one frame to what the peer will send; {@code payload} may be shorter than {@code len}. */
        private void frame(long seq, long ack, int flags, int sport, int dport, long len, byte[] ext, byte[] payload) {
            header.clear().sequence(seq).ack(ack).flags(flags).sourcePort(sport).destinationPort(dport).length(len);
            System.arraycopy(ext, 0, header.extensions(), 0, RdsHeader.EXTHDR_SIZE);
            headerBytes.clear();
            header.encode(headerBytes);
            pending.writeBytes(headerBytes.array());
            pending.writeBytes(payload);
        }

        /** TCP delivers the next {@code n} bytes the peer sent. */
        private void feed(int n) {
            byte[] all = pending.toByteArray();
            n = Math.min(n, all.length);
            pending.reset();
            pending.write(all, n, all.length - n);
            if (conn == null || !conn.open()) {
                return;                                      // no connection: the peer's bytes go nowhere
            }
            stream.accept(all, 0, n);
            conn.feed(ByteBuffer.wrap(all, 0, n));
        }

        private void pump(int frames) {
            for (FuzzTransport.Conn c : transport.connections) {
                c.pump(frames);
            }
        }

        private void drain(int i) throws IOException {
            RdsMessageInfo info = new RdsMessageInfo();
            for (int n = 0; n < 10_000; n++) {
                RECEIVED.clear();
                try {
                    int got = sockets[i].receive(RECEIVED, info, RdsSocket.MSG_DONTWAIT);
                    if (info.kind() != RdsDatagram.Kind.DATA) {
                        continue;                            // a congestion notification or a send failure
                    }
                    assertEquals(PEER, info.source().getAddress(), "every message here came from the peer");
                    assertEquals(PORTS[i], info.destinationPort());
                    received.get(i).add(new Message(info.source().getPort(),
                            Arrays.copyOf(RECEIVED.array(), got)));
                } catch (EagainException e) {
                    return;
                }
            }
            throw new AssertionError("socket " + PORTS[i] + " never ran dry");
        }

        private void send(FuzzedDataProvider data) {
            try {
                sockets[data.consumeInt(0, PORTS.length - 1)].send(
                        ByteBuffer.wrap(data.consumeBytes(data.consumeInt(0, 100))),
                        new InetSocketAddress(PEER, 7000 + data.consumeInt(0, 3)));
                sends++;
            } catch (IOException e) {
                // EAGAIN, ENOBUFS (a congested port in the peer's map): documented outcomes of a send
            }
        }

        private void peerCloses(boolean reset) {
            if (conn != null && conn.open()) {
                conn.finish(reset ? new IOException("connection reset by the fuzzed peer") : null);
            }
            conn = null;
            pending.reset();                                 // what the peer had not sent dies with its socket
        }

        /** After each move: once the path's connection has closed, the oldest waiting connection takes the path. */
        private void waitingTakesThePath() {
            if (!waiting.isEmpty() && waiting.get(0).readable()) {
                taken(waiting.remove(0));
            }
            assertTrue(waiting.stream().noneMatch(FuzzTransport.Conn::readable), "one connection per path");
        }

        private void accept() {
            FuzzTransport.Conn c = transport.accept(new InetSocketAddress(LOCAL, 16385),
                    new InetSocketAddress(PEER, nextPeerPort++));
            if (c == null) {
                return;                                      // refused: too many wait already
            }
            if (c.readable()) {
                taken(c);
            } else {
                assertTrue(conn != null, "a connection waits only while another has the path");
                waiting.add(c);
            }
        }

        private void taken(FuzzTransport.Conn c) {
            conn = c;
            stream = new StreamModel();
            pending.reset();                                 // a new connection starts a new byte stream
        }

        // -------------------------------------------------------------------------------------------- the model

        /** The model's own reading of one connection's byte stream, fed the same bytes as the stack. */
        final class StreamModel {
            private final ByteArrayOutputStream buffered = new ByteArrayOutputStream();
            private boolean dead;

            void accept(byte[] bytes, int off, int n) {
                if (dead) {
                    return;
                }
                buffered.write(bytes, off, n);
                byte[] all = buffered.toByteArray();
                int pos = 0;
                while (all.length - pos >= RdsHeader.SIZE) {
                    RdsHeader h = new RdsHeader().decode(ByteBuffer.wrap(all, pos, RdsHeader.SIZE));
                    if (h.length() > CAP) {
                        dead = true;
                        protocolErrors++;
                        return;
                    }
                    if (all.length - pos - RdsHeader.SIZE < h.length()) {
                        break;
                    }
                    byte[] payload = Arrays.copyOfRange(all, pos + RdsHeader.SIZE,
                            pos + RdsHeader.SIZE + (int) h.length());
                    pos += RdsHeader.SIZE + (int) h.length();
                    onFrame(h, payload);
                }
                buffered.reset();
                buffered.write(all, pos, all.length - pos);
            }
        }

        /** The kernel's rules for one complete frame, as docs/protocol.md and docs/reliability.md state them. */
        private void onFrame(RdsHeader h, byte[] payload) {
            if (h.isCongestionMap()) {
                if (payload.length == CongestionMap.BYTES) {
                    peerMap = payload;
                }
                return;                                      // maps take no sequence number
            }
            if (h.hasFlag(RdsHeader.FLAG_RETRANSMITTED) && Long.compareUnsigned(h.sequence(), nextRx) < 0) {
                return;                                      // a duplicate after a reset
            }
            nextRx = h.sequence() + 1;
            int sport = h.sourcePort();
            int dport = h.destinationPort();
            if (dport == 0 && sport != 0) {
                pings++;
                pingedFrom.add(sport);
            }
            if ((dport == 0 && sport == 1) || (sport == 0 && dport == 1)) {
                // A probe or its pong: a GEN_NUM other than the one known is a restart, and so is none where there
                // was one (docs/reliability.md: a 6.1 kernel, which sends none, took the address; rds4j's own rule,
                // where the kernel only compares non-zero values).
                long gen = Math.max(0, ExtensionHeaders.find(h.extensions(), ExtensionHeaders.GEN_NUM));
                if (peerGeneration != 0 && peerGeneration != gen) {
                    nextRx = 0;                              // the peer restarted: it numbers from 1 again
                }
                peerGeneration = gen;
            }
            for (int i = 0; i < PORTS.length; i++) {
                if (PORTS[i] == dport) {
                    expected.get(i).add(new Message(sport, payload));
                }
            }
        }

        // -------------------------------------------------------------------------------------------- invariants

        private Connection connection() {
            for (Connection c : stack.connections()) {
                if (c.peer().equals(PEER)) {
                    return c;
                }
            }
            throw new AssertionError("no connection to the peer");
        }

        /** What the path holds is bounded by what this input asked of it. */
        private void checkBounded() {
            Connection c = connection();
            int queued = c.path(0).queuedMessages();
            assertTrue(queued <= sends + pings + 16, "the path holds " + queued + " messages after " + sends
                    + " sends and " + pings + " pings");
            assertTrue(c.peerPaths() >= 0 && c.peerPaths() <= 8, "NPATHS as read: " + c.peerPaths());
        }

        private void finish() throws IOException {
            feed(Integer.MAX_VALUE);
            for (int i = 0; i < 64 && transport.connections.stream().anyMatch(
                    c -> !c.finished && (c.transmitRequested.get() || c.closedByCore.get())); i++) {
                pump(64);
            }
            for (int i = 0; i < PORTS.length; i++) {
                drain(i);
                assertEquals(expected.get(i), received.get(i), "socket " + PORTS[i] + " received exactly what the "
                        + "peer sent it, in order, once");
            }
            assertEquals(protocolErrors, stack.statistics().get(Counter.RECV_PROTOCOL_ERROR),
                    "each h_len above 1 MiB dropped its connection, counted once");
            byte[] map = new byte[CongestionMap.BYTES];
            stack.peerMap(PEER).copyTo(map);
            if (peerMap != null) {
                assertArrayEquals(peerMap, map, "the peer's map is the last whole map it sent");
            } else {
                assertArrayEquals(new byte[CongestionMap.BYTES], map, "no whole map arrived: nothing congested");
            }
            checkBounded();
            for (FuzzTransport.Conn c : transport.connections) {
                // Per connection: a pong resent after a reset and then a peer restart is renumbered (docs/reliability.md,
                // "Peer restarts", as the kernel splices its retransmit list into the send queue on a reset), so across
                // connections one pong may show two numbers.
                Set<Long> pongs = new HashSet<>();
                checkWritten(c.written.toByteArray(), pongs);
                assertTrue(pongs.size() <= pings, pongs.size() + " pongs on one connection for " + pings + " pings");
            }
        }

        /** Everything the stack wrote is RDS that any receiver (ours included) accepts. */
        private void checkWritten(byte[] bytes, Set<Long> pongs) {
            FrameDecoder decoder = new FrameDecoder(CAP);
            try {
                decoder.decode(ByteBuffer.wrap(bytes), new FrameDecoder.Listener() {
                    @Override
                    public ByteBuffer payloadBuffer(RdsHeader h) {
                        return null;
                    }

                    @Override
                    public void onMessage(RdsHeader h, ByteBuffer payload) {
                        if (h.isCongestionMap()) {
                            assertTrue(h.length() == CongestionMap.BYTES && h.sequence() == 0, "our map: " + h);
                        } else if (h.sourcePort() == 0 && h.destinationPort() != 0) {
                            pongs.add(h.sequence());        // a pong resent after a reset keeps its number
                            assertTrue(pingedFrom.contains(h.destinationPort()), "a pong to port "
                                    + h.destinationPort() + ", which never pinged: " + h);
                        }
                    }
                });
            } catch (RdsProtocolException e) {
                throw new AssertionError("the stack wrote a frame it would itself refuse", e);
            }
            assertNull(decoder.inMessage() ? "a frame cut short" : null, "every pass writes whole frames");
        }
    }

    private static InetAddress address(int a, int b, int c, int d) {
        try {
            return InetAddress.getByAddress(new byte[] {(byte) a, (byte) b, (byte) c, (byte) d});
        } catch (java.net.UnknownHostException e) {
            throw new AssertionError(e);
        }
    }
}
