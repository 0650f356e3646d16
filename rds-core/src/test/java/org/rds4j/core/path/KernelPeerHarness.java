package org.rds4j.core.path;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.rds4j.RdsDatagram;
import org.rds4j.core.cong.CongestionMap;
import org.rds4j.core.spi.FrameSink;
import org.rds4j.core.wire.ExtensionHeaders;
import org.rds4j.core.wire.RdsHeader;

/**
 * A real {@link ConnectionPath} (the host with the smaller address, which connects and reconnects by itself) talking
 * over {@link FakeTransport} in virtual time to a simulated kernel peer, for the acknowledgement model test
 * ({@code AcknowledgementModelTest}, docs/reliability.md).
 *
 * <p>The peer behaves as a Linux kernel does over TCP: it never sends h_ack; it reads rds4j's frames in order, keeps
 * every data message it accepts (the kernel's duplicate rule: a retransmitted frame numbered below the next expected
 * is dropped), and answers every ping with a pong queued on its path, in order. Its path's send queue (the pongs, and
 * the probe with its GEN_NUM it sends on every new connection) outlives a connection: a reset cuts what rds4j wrote
 * and the peer had not read yet, and either keeps the peer's unsent pongs for the next connection (a late answer) or
 * loses them. Faults the test injects: a pong the peer does not produce (a lost pong), pings cut by a reset before
 * the peer read them (lost pings), resets at any point, a peer restart (it forgets everything, comes back with a new
 * GEN_NUM), phases in which it answers no ping at all ({@code net.rds.ping_enable=0}), and time passing.
 *
 * <p>Checked as it happens: every message released to its socket is one the current peer generation has, and
 * messages are settled (released or failed) oldest first; a message fails UNACKNOWLEDGED only after 5 s in which no
 * pong to an acknowledgement port reached rds4j, and PEER_RESTARTED only when rds4j learns the peer's current
 * generation and knew another before.
 * {@link #settle} checks liveness: with the peer answering and no more faults, everything is released within
 * {@link #SETTLE_BOUND_NANOS}.
 */
final class KernelPeerHarness {
    static final long MS = 1_000_000L;
    /**
     * With the peer answering again, the worst wait: a ping whose pong was lost expires 2 s after it was sent, the
     * next maintenance tick (50 ms) asks again; a path that is down reconnects within the backoff ceiling (1 s here);
     * plus a round trip and slack for the ticks.
     */
    static final long SETTLE_BOUND_NANOS = AckRequests.PING_EXPIRY_NANOS + FakeEnvironment.MAX_NANOS + 300 * MS;
    private static final long SETTLE_STEP_NANOS = 10 * MS;

    /** A frame on the wire: from rds4j to the peer ({@code appId} > 0 for a socket's message), or the other way. */
    record Frame(long seq, int flags, int sport, int dport, long appId, long generation) {
    }

    /** What the test knows of a socket's message. */
    private record Sent(long appId) {
    }

    /** The socket: records releases and failures as they happen and checks them at once. */
    private final class Owner implements MessageOwner {
        @Override
        public void zeroCopyCompleted(int cookie) {
            throw new AssertionError("no zero-copy message is sent here, yet cookie " + cookie + " was reported");
        }

        @Override
        public boolean isClosed() {
            return false;
        }

        @Override
        public void released(OutgoingMessage first, OutgoingMessage last, int entries, int count, long bytes) {
            int n = 0;
            for (OutgoingMessage m = first; m != null; m = m == last ? null : m.next) {
                long id = idOf(m);
                expect(peerHas.contains(id), "SAFETY: message " + id + " released, but the peer (generation "
                        + Long.toHexString(peerGen) + ") does not have it; it has " + new java.util.TreeSet<>(peerHas));
                settled(id, "released");
                released++;
                n++;
            }
            expect(n == count, "released " + count + " messages, the chain holds " + n);
        }

        @Override
        public void failed(OutgoingMessage m, InetSocketAddress destination, RdsDatagram.Failure reason,
                           String why) {
            long id = idOf(m);
            long now = env.nanoTime();
            switch (reason) {
                case UNACKNOWLEDGED -> {
                    expect(now - lastAckPongNanos >= AckRequests.PEER_SILENT_NANOS,
                            "message " + id + " failed UNACKNOWLEDGED at " + now / MS
                                    + " ms, but a pong reached rds4j at " + lastAckPongNanos / MS + " ms");
                    expect(now - connectedNanos >= AckRequests.PEER_SILENT_NANOS,
                            "message " + id + " failed UNACKNOWLEDGED at " + now / MS + " ms on a connection up since "
                                    + connectedNanos / MS + " ms");
                    failedUnacknowledged++;
                }
                case PEER_RESTARTED -> {
                    // rds4j is learning the peer's current generation, and it knew another one before
                    expect(connection.peerGeneration() == peerGen && knownGen != 0 && knownGen != peerGen,
                            "message " + id + " failed PEER_RESTARTED; rds4j knew generation "
                                    + Long.toHexString(knownGen) + ", the peer is at " + Long.toHexString(peerGen));
                    failedPeerRestarted++;
                }
                default -> expect(false, "message " + id + " failed " + reason);
            }
            settled(id, "failed " + reason);
        }
    }

    /** Records what the path writes on the current connection, in order, as frames in flight to the peer. */
    private final class Wire implements FrameSink {
        private final FakeTransport.FakeConnection conn;
        private final int capacity;
        private int written;

        Wire(FakeTransport.FakeConnection conn, int capacity) {
            this.conn = conn;
            this.capacity = capacity;
        }

        @Override
        public boolean isWritable() {
            return written < capacity;
        }

        @Override
        public void write(ByteBuffer header, ByteBuffer payload) {
            RdsHeader h = new RdsHeader().decode(header.duplicate());
            conn.streamOffset += header.remaining() + payload.remaining();
            written++;
            if (h.isCongestionMap()) {
                return;
            }
            Long id = payloadIds.get(payload);
            toPeer.addLast(new Frame(h.sequence(), h.flags(), h.sourcePort(), h.destinationPort(),
                    id == null ? 0 : id, ExtensionHeaders.find(h.extensions(), ExtensionHeaders.GEN_NUM)));
        }

        @Override
        public long streamOffset() {
            return conn.streamOffset;
        }
    }

    final FakeEnvironment env;
    final FakeTransport transport;
    final Connection connection;
    final ConnectionPath path;
    private final Owner owner = new Owner();
    private final List<String> trace = new ArrayList<>();
    private boolean settling;

    // rds4j's side, as the test sees it
    private final Map<ByteBuffer, Long> payloadIds = new IdentityHashMap<>();
    private final Map<OutgoingMessage, Long> messageIds = new IdentityHashMap<>();
    /** Messages queued and not yet released or failed, by id (ids rise in queueing order). */
    final TreeMap<Long, Sent> outstanding = new TreeMap<>();
    private long nextAppId = 1;
    long released;
    long failedUnacknowledged;
    long failedPeerRestarted;
    /** The live connection, or null. */
    FakeTransport.FakeConnection conn;
    private long connectedNanos;
    /** The peer's generation as rds4j knew it after the last step. */
    private long knownGen;
    /** When a pong to one of rds4j's acknowledgement ports last reached it. */
    private long lastAckPongNanos;

    // the kernel peer
    long peerGen = 0x7E57_0001L;
    int restarts;
    boolean peerAnswers = true;
    final Set<Long> peerHas = new HashSet<>();
    private long peerNextRx;
    private long peerTxSeq = 1;
    /** rds4j's frames written on the current connection that the peer has not read yet. */
    final ArrayDeque<Frame> toPeer = new ArrayDeque<>();
    /** The peer's path send queue: pongs and its probe, not yet read by rds4j. */
    final ArrayDeque<Frame> peerOutbox = new ArrayDeque<>();
    long pingsLost;
    long lateAnswersKept;
    /** The longest {@link #settle} took, in virtual nanoseconds. */
    long longestSettleNanos;

    KernelPeerHarness(long seed) {
        env = new FakeEnvironment(seed);
        transport = new FakeTransport(env.scheduler);
        connection = new Connection(PathHarness.SMALL, PathHarness.LARGE, "fake", transport, env, new CongestionMap());
        path = connection.path(0);
    }

    // ---------------------------------------------------------------------------------------- operations

    /** The application queues {@code count} messages. */
    void send(int count) {
        step("send " + count);
        for (int i = 0; i < count; i++) {
            long id = nextAppId++;
            ByteBuffer payload = ByteBuffer.allocate(8).putLong(0, id);
            OutgoingMessage m = new OutgoingMessage(PathHarness.SPORT, PathHarness.DPORT, payload, owner, null, false);
            payloadIds.put(payload, id);
            messageIds.put(m, id);
            outstanding.put(id, new Sent(id));
            path.enqueue(m);
        }
        afterStep();
    }

    /** The transport completes the path's outstanding connect attempt. */
    void connect() {
        FakeTransport.Attempt a = transport.pendingAttempts().get(0);
        step("connect " + a);
        a.completed = true;
        FakeTransport.FakeConnection c = transport.newConnection(true, PathHarness.SMALL, PathHarness.LARGE);
        c.handler = a.handler;
        a.connection = c;
        toPeer.clear();
        // A kernel from 7.0 probes when path 0 comes up, with its generation; behind the pongs it still holds.
        peerOutbox.addLast(new Frame(0, 0, ConnectionPath.PROBE_PORT, 0, 0, peerGen));
        a.handler.onConnected(c);
        if (c.live()) {
            conn = c;
            connectedNanos = env.nanoTime();
        }
        afterStep();
    }

    /** The I/O thread runs a transmit pass with room for {@code capacity} frames. */
    void transmit(int capacity) {
        step("transmit, room for " + capacity);
        conn.handler.transmit(new Wire(conn, capacity));
        afterStep();
    }

    /** The transport reports that everything written has left. */
    void transmitted() {
        step("transmitted up to " + conn.streamOffset);
        conn.reported = conn.streamOffset;
        conn.handler.onTransmitted(conn.streamOffset);
        afterStep();
    }

    /** The peer reads up to {@code count} frames; if {@code losePong}, the first ping among them gets no answer. */
    void peerReads(int count, boolean losePong) {
        step("peer reads " + count + (losePong ? ", loses a pong" : ""));
        for (int i = 0; i < count && !toPeer.isEmpty(); i++) {
            Frame f = toPeer.pollFirst();
            // the kernel's duplicate rule (rds_recv_incoming), before anything else
            if ((f.flags() & RdsHeader.FLAG_RETRANSMITTED) != 0 && Long.compareUnsigned(f.seq(), peerNextRx) < 0) {
                continue;
            }
            peerNextRx = f.seq() + 1;
            if (f.appId() > 0) {
                peerHas.add(f.appId());
            } else if (f.dport() == 0 && f.sport() == ConnectionPath.PROBE_PORT) {
                peerOutbox.addLast(new Frame(0, 0, 0, ConnectionPath.PROBE_PORT, 0, peerGen));
            } else if (f.dport() == 0 && f.sport() != 0) {
                if (!peerAnswers || losePong) {
                    losePong = false;
                    pingsLost++;
                } else {
                    peerOutbox.addLast(new Frame(0, 0, 0, f.sport(), 0, 0));
                }
            }
            // pongs to our probe and anything else of rds4j's own: nothing for the peer to do
        }
        afterStep();
    }

    /** Up to {@code count} of the peer's queued frames reach rds4j, in one read. */
    void peerDelivers(int count) {
        step("peer delivers " + count);
        List<Frame> frames = new ArrayList<>();
        for (int i = 0; i < count && !peerOutbox.isEmpty(); i++) {
            frames.add(peerOutbox.pollFirst());
        }
        ByteBuffer b = ByteBuffer.allocate(frames.size() * RdsHeader.SIZE);
        for (Frame f : frames) {
            RdsHeader h = new RdsHeader().sequence(peerTxSeq++).sourcePort(f.sport()).destinationPort(f.dport());
            if (f.generation() != 0) {
                ExtensionHeaders.add(h.extensions(), ExtensionHeaders.NPATHS, 1, ExtensionHeaders.AddMode.APPEND);
                ExtensionHeaders.add(h.extensions(), ExtensionHeaders.GEN_NUM, f.generation(),
                        ExtensionHeaders.AddMode.APPEND);
            }
            h.encode(b);
            if (f.sport() == 0 && f.dport() != ConnectionPath.PROBE_PORT) {
                lastAckPongNanos = env.nanoTime();
            }
        }
        b.flip();
        conn.handler.onBytes(b);
        afterStep();
    }

    /**
     * The connection resets: what rds4j wrote and the peer had not read is lost; the peer's unsent pongs stay queued
     * for the next connection ({@code keepPongs}: late answers) or are lost with it.
     */
    void reset(boolean keepPongs) {
        step("reset" + (keepPongs ? ", the peer keeps its pongs" : ", pongs lost"));
        resetNow(keepPongs);
        afterStep();
    }

    /** The peer restarts: it forgets everything, its connection resets, it comes back with a new generation. */
    void peerRestarts() {
        step("peer restarts");
        restarts++;
        peerGen = (peerGen + 0x101) & 0xFFFF_FFFFL;
        peerHas.clear();
        peerNextRx = 0;
        peerTxSeq = 1;
        peerOutbox.clear();
        if (conn != null) {
            resetNow(false);
        }
        afterStep();
    }

    /** The peer starts or stops answering pings at all (net.rds.ping_enable). */
    void peerAnswers(boolean answers) {
        step("peer " + (answers ? "answers pings" : "answers no ping"));
        peerAnswers = answers;
        afterStep();
    }

    /** Virtual time passes: maintenance ticks, the fallback, expiry, the give-up, reconnects. */
    void advance(long nanos) {
        step("advance " + nanos / MS + " ms");
        env.scheduler.advanceBy(nanos);
        afterStep();
    }

    /**
     * Liveness: the peer answers every ping from now on and nothing goes wrong; the transport and the peer do all
     * they can at each 10 ms step. Every message must be released (or failed, as {@link Owner} allows) within
     * {@link #SETTLE_BOUND_NANOS}.
     */
    void settle() {
        step("settle");
        peerAnswers = true;
        long start = env.nanoTime();
        settling = true;
        while (!outstanding.isEmpty()) {
            long waited = env.nanoTime() - start;
            if (waited > SETTLE_BOUND_NANOS) {
                settling = false;
                expect(false, "LIVENESS: " + outstanding.size() + " messages (from " + outstanding.firstKey()
                        + ") still held after " + waited / MS + " ms with the peer answering: " + toPeer.size()
                        + " frames to the peer, " + peerOutbox.size() + " from it; " + describeAcks());
            }
            for (int round = 0; round < 4; round++) {
                if (conn == null && !transport.pendingAttempts().isEmpty()) {
                    connect();
                }
                if (conn != null) {
                    transmit(Integer.MAX_VALUE);
                    transmitted();
                    peerReads(Integer.MAX_VALUE, false);
                    peerDelivers(Integer.MAX_VALUE);
                }
            }
            if (!outstanding.isEmpty()) {
                env.scheduler.advanceBy(SETTLE_STEP_NANOS);
                afterStep();
            }
        }
        settling = false;
        longestSettleNanos = Math.max(longestSettleNanos, env.nanoTime() - start);
    }

    /** The path's acknowledgement slots, read by reflection for failure messages. */
    String describeAcks() {
        try {
            java.lang.reflect.Field f = ConnectionPath.class.getDeclaredField("acks");
            f.setAccessible(true);
            Object acks = f.get(path);
            StringBuilder b = new StringBuilder("acknowledgement slots:");
            for (String name : new String[] {"ports", "pingSeq", "pingEpoch", "quarantinedSince", "epoch"}) {
                java.lang.reflect.Field g = Acknowledgements.class.getDeclaredField(name);
                g.setAccessible(true);
                Object v = g.get(acks);
                b.append(' ').append(name).append('=').append(v instanceof int[] a ? java.util.Arrays.toString(a)
                        : v instanceof long[] l ? java.util.Arrays.toString(l) : String.valueOf(v));
            }
            return b.toString();
        } catch (ReflectiveOperationException e) {
            return "(acknowledgement slots unreadable: " + e + ")";
        }
    }

    // ---------------------------------------------------------------------------------------- plumbing

    boolean up() {
        return conn != null;
    }

    boolean connectPending() {
        return conn == null && !transport.pendingAttempts().isEmpty();
    }

    private void resetNow(boolean keepPongs) {
        FakeTransport.FakeConnection c = conn;
        conn = null;
        toPeer.clear();
        if (keepPongs) {
            lateAnswersKept += peerOutbox.stream().filter(f -> f.generation() == 0).count();
            peerOutbox.removeIf(f -> f.generation() != 0);   // a probe is sent again on the next connection
        } else {
            peerOutbox.clear();
        }
        c.closedDelivered = true;
        c.handler.onClosed(new IOException("connection reset by peer (test)"));
    }

    /** A connection the path closed or aborted itself is reported closed by the transport. */
    private void afterStep() {
        knownGen = connection.peerGeneration();
        if (conn != null && (conn.closeCalls > 0 || conn.abortCalls > 0)) {
            step("the transport reports the close the path asked for");
            resetNow(false);
        }
    }

    private long idOf(OutgoingMessage m) {
        Long id = messageIds.get(m);
        expect(id != null, "a message the test did not send was given to the socket: " + m);
        return id;
    }

    private void settled(long id, String how) {
        expect(!outstanding.isEmpty() && outstanding.firstKey() == id, "message " + id + " " + how
                + " out of order: the oldest held is " + (outstanding.isEmpty() ? "none" : outstanding.firstKey()));
        outstanding.remove(id);
    }

    private void step(String s) {
        if (settling) {
            return;                                   // the settle loop's steps would drown what led there
        }
        trace.add(env.nanoTime() / MS + " ms: " + s);
    }

    void expect(boolean ok, String what) {
        if (!ok) {
            StringBuilder b = new StringBuilder(what).append("\n  ").append(path).append("\n  after:");
            int from = Math.max(0, trace.size() - 60);
            for (int i = from; i < trace.size(); i++) {
                b.append("\n    ").append(i + 1).append(". ").append(trace.get(i));
            }
            throw new AssertionError(b.toString());
        }
    }
}
