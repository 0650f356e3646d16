package org.rds4j.core.path;

import java.io.IOException;
import java.lang.reflect.Field;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.rds4j.core.stack.RdsCounters.Counter;
import org.rds4j.core.cong.CongestionMap;
import org.rds4j.core.spi.ConnectionHandler;
import org.rds4j.core.spi.FrameSink;
import org.rds4j.core.wire.RdsHeader;

/**
 * One {@link ConnectionPath} under test, driven through its transport-facing entry points with fakes, next to a model
 * of what rds4j documents it does (docs/protocol.md, "Connections"; net/rds/threads.c). Every operation drives the real
 * path, updates the model, checks what the operation itself must have caused (a connect call, a close, a scheduled
 * reconnect with the right delay), and {@link #check()} compares the whole state after it.
 *
 * <p>Model: the state, the handler the path is using (an outgoing attempt or an accepted connection), whether a
 * reconnect is pending and the backoff ceiling, the messages queued (unsent) and written (unreleased) by sequence
 * number, which are marked retransmitted, the next sequence number, the number of resets.
 */
final class PathHarness {
    static final InetAddress SMALL = address(10, 0, 0, 1);
    static final InetAddress LARGE = address(10, 0, 0, 2);
    static final int SPORT = 4000;
    static final int DPORT = 5000;

    /** A socket as the path sees it: never closed; records what the path released, in order. */
    static final class Owner implements MessageOwner {
        final List<Long> released = new ArrayList<>();
        final List<Long> cancelled = new ArrayList<>();
        long releasedCount;
        /** Set by a test that closes the socket: its messages are then dropped (CANCELLED), as it expects. */
        boolean closing;

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
            if (count <= 0) {
                throw new AssertionError("a release of " + count + " messages");
            }
            int n = 0;
            for (OutgoingMessage m = first; m != null; m = m == last ? null : m.next) {
                released.add(m.sequence());         // the chain comes oldest first
                n++;
            }
            if (n != count) {
                throw new AssertionError("released " + count + " messages, but the chain holds " + n);
            }
            releasedCount += count;
        }

        /** No cancellations or peer restarts happen in the model: a failure is a bug, unless a test closes. */
        @Override
        public void failed(OutgoingMessage message, java.net.InetSocketAddress destination,
                           org.rds4j.RdsDatagram.Failure reason, String why) {
            if (closing && reason == org.rds4j.RdsDatagram.Failure.CANCELLED) {
                cancelled.add(message.sequence());
                return;
            }
            throw new AssertionError("message " + message + " failed (" + reason + ")");
        }
    }

    /** A sink that takes {@code capacity} frames (the congestion map included) and records their headers. */
    static final class RecordingSink implements FrameSink {
        record Frame(long sequence, long ack, int flags, long length, int sport, int dport, long end) {
        }

        private final FakeTransport.FakeConnection conn;
        private final int capacity;
        final List<Frame> frames = new ArrayList<>();

        RecordingSink(FakeTransport.FakeConnection conn, int capacity) {
            this.conn = conn;
            this.capacity = capacity;
        }

        @Override
        public boolean isWritable() {
            return frames.size() < capacity;
        }

        @Override
        public void write(ByteBuffer header, ByteBuffer payload) {
            RdsHeader h = new RdsHeader().decode(header.duplicate());
            if (h.length() != payload.remaining()) {
                throw new AssertionError("h_len " + h.length() + " but " + payload.remaining() + " payload bytes");
            }
            conn.streamOffset += header.remaining() + payload.remaining();
            conn.frameEnds.add(conn.streamOffset);
            frames.add(new Frame(h.sequence(), h.ack(), h.flags(), h.length(), h.sourcePort(),
                    h.destinationPort(), conn.streamOffset));
        }

        @Override
        public long streamOffset() {
            return conn.streamOffset;
        }
    }

    final boolean smaller;
    final InetAddress local;
    final InetAddress peer;
    final FakeEnvironment env;
    final FakeTransport transport;
    final Connection connection;
    final ConnectionPath path;
    final Owner owner = new Owner();
    private final List<String> trace = new ArrayList<>();

    // ---------------------------------------------------------------------------------------- the model
    PathState mState = PathState.DOWN;
    /** The handler the path is using: the current attempt's or the accepted connection's; null when DOWN. */
    ConnectionHandler mCurrent;
    boolean mPending;
    long mCeiling;
    /** When the current connection came up (virtual time). */
    long mUpAt;
    /** Connections in a row that came up and closed before the peer sent on them or they lasted 1 s. */
    int mUnproven;
    final ArrayDeque<Long> mSend = new ArrayDeque<>();
    final ArrayDeque<Long> mSent = new ArrayDeque<>();
    final Set<Long> mRetransmit = new HashSet<>();
    final Map<Long, Long> mStreamEnd = new HashMap<>();
    final List<Long> mReleased = new ArrayList<>();
    long mNextTx = 1;
    long mResets;
    boolean mCongQueued;
    int mAttempts;
    /** The maintenance timer runs while the path is UP or DISCONNECTING. */
    boolean mMaintenance;
    // acknowledgements (docs/reliability.md)
    long mNextRx;
    long mPeerSeq = 1;
    boolean mPeerAcks;
    boolean mAckOwed;
    boolean mAckOnlyQueued;
    long mLastPassEnd;
    int[] mPorts = FakeEnvironment.ACK_PORTS.clone();
    long[] mAckPing = new long[mPorts.length];
    /** The epoch the outstanding ping of each port was sent in. */
    long[] mPingEpoch = new long[mPorts.length];
    /** Non-zero: the port had a ping outstanding at the reset that began this epoch; unusable until lifted. */
    long[] mQuarantine = new long[mPorts.length];
    long mEpoch;
    int mNextAckSlot;
    /** Sequence numbers of the protocol's own messages (probe, acknowledgement pings, ack-only): no owner. */
    final Map<Long, String> mProtocol = new HashMap<>();

    // what was already accounted for
    private int drawsSeen;
    private int tasksSeen;
    private long lastNextTx = 1;
    private final Map<ConnectionHandler, Boolean> handlersSeen = new IdentityHashMap<>();
    final Set<FakeTransport.FakeConnection> corrupted = new HashSet<>();

    PathHarness(boolean smaller, long seed) {
        this.smaller = smaller;
        this.local = smaller ? SMALL : LARGE;
        this.peer = smaller ? LARGE : SMALL;
        this.env = new FakeEnvironment(seed);
        this.transport = new FakeTransport(env.scheduler);
        this.connection = new Connection(local, peer, "fake", transport, env, new CongestionMap());
        this.path = connection.path(0);
        if (connection.initiates() != smaller) {
            throw new AssertionError("Addresses.initiates disagrees with the test's addresses");
        }
    }

    @Override
    public String toString() {
        return (smaller ? "smaller" : "larger") + " host: " + path + " model " + mState + " pending=" + mPending;
    }

    // ---------------------------------------------------------------------------------------- operations

    /** A socket queues a message of {@code len} bytes. */
    OutgoingMessage enqueue(int len) {
        OutgoingMessage r = enqueue0(len);
        check();
        return r;
    }

    private OutgoingMessage enqueue0(int len) {
        step("enqueue " + len + " bytes");
        FakeTransport.FakeConnection cur = liveCurrent();
        int before = cur == null ? 0 : cur.transmitRequests;
        OutgoingMessage m = new OutgoingMessage(SPORT, DPORT, ByteBuffer.allocate(len), owner, null, false);
        path.enqueue(m);
        path.queuedMessages();      // takes the inbox in and numbers it, as the I/O thread's next pass would
        expect(m.sequence() == mNextTx, "the message got sequence " + m.sequence() + ", expected " + mNextTx);
        mSend.addLast(mNextTx++);
        if (mState == PathState.UP) {
            expect(cur != null && cur.transmitRequests == before + 1, "queueing on an UP path asks for transmit");
        } else if (mState == PathState.DOWN && !mPending) {
            expectConnect("a message queued on a DOWN path");
        }
        return m;
    }

    /** The transport reports that attempt {@code a} connected. */
    FakeTransport.FakeConnection connectSucceeds(FakeTransport.Attempt a) {
        FakeTransport.FakeConnection r = connectSucceeds0(a);
        check();
        return r;
    }

    private FakeTransport.FakeConnection connectSucceeds0(FakeTransport.Attempt a) {
        step("connect succeeds: " + a);
        expect(!a.completed, "test bug: completing " + a + " twice");
        a.completed = true;
        FakeTransport.FakeConnection c = transport.newConnection(true, local, peer);
        c.handler = a.handler;
        a.connection = c;
        boolean isCurrent = a.handler == mCurrent && mState == PathState.CONNECTING;
        a.handler.onConnected(c);
        if (!isCurrent) {
            expect(c.closeCalls + c.abortCalls == 1, "a stale connect success is closed, " + c);
            return c;
        }
        if (smaller) {
            up(c);
        } else {
            // a poke: close at once, back to DOWN, re-poke later only with messages queued
            expect(c.closeCalls == 1, "the larger host closes its poke once connected, " + c);
            expect(c.transmitRequests == 0, "nothing is transmitted on a poke");
            mCurrent = null;
            mState = PathState.DOWN;
            if (queued() > 0) {
                scheduleReconnect();
            }
        }
        return c;
    }

    /** The transport reports that attempt {@code a} failed. */
    void connectFails(FakeTransport.Attempt a) {
        connectFails0(a);
        check();
    }

    private void connectFails0(FakeTransport.Attempt a) {
        step("connect fails: " + a);
        expect(!a.completed, "test bug: completing " + a + " twice");
        a.completed = true;
        boolean isCurrent = a.handler == mCurrent;
        a.handler.onConnectFailed(new ConnectException("connection refused (test)"));
        if (isCurrent) {
            mCurrent = null;
            mState = PathState.DOWN;
            if (smaller || queued() > 0) {
                scheduleReconnect();
            }
        }
    }

    /** The transport reports that connection {@code c} closed (the peer closed it, it broke, or we closed it). */
    void closes(FakeTransport.FakeConnection c, boolean error) {
        closes0(c, error);
        check();
    }

    private void closes0(FakeTransport.FakeConnection c, boolean error) {
        step("connection closes" + (error ? " with an error" : "") + ": " + c);
        expect(!c.closedDelivered && c.handler != null, "test bug: closing " + c);
        c.closedDelivered = true;
        boolean isCurrent = c.handler == mCurrent;
        long retransmittedBefore = env.counters.get(Counter.SEND_RETRANSMITTED);
        c.handler.onClosed(error ? new IOException("connection reset by peer (test)") : null);
        if (!isCurrent) {
            return;
        }
        mCurrent = null;
        boolean wasUp = mState == PathState.UP || mState == PathState.DISCONNECTING;
        mState = PathState.DOWN;
        mMaintenance = false;
        if (wasUp) {
            mResets++;
        }
        // Acknowledgement pings are not resent (a late pong could not be told from a new one): sent or not, they
        // go, and the ports of those written and outstanding are quarantined for the new epoch.
        int requeued = 0;
        Set<Long> written = new HashSet<>(mSent);
        while (!mSent.isEmpty()) {
            long s = mSent.pollLast();
            if (isPing(s)) {
                continue;
            }
            mRetransmit.add(s);
            mSend.addFirst(s);
            requeued++;
        }
        mSend.removeIf(this::isPing);
        mEpoch++;
        for (int i = 0; i < mAckPing.length; i++) {
            if (mAckPing[i] != 0) {
                if (written.contains(mAckPing[i])) {
                    mQuarantine[i] = mEpoch;        // a ping never written cannot be answered: no quarantine
                }
                mAckPing[i] = 0;
            }
        }
        expect(env.counters.get(Counter.SEND_RETRANSMITTED) == retransmittedBefore + requeued,
                "send_retransmitted counts the " + requeued + " requeued messages");
        if (c.bytesDelivered || (wasUp && env.nanoTime() - mUpAt >= FakeEnvironment.MAX_NANOS)) {
            mCeiling = 0;                           // it proved itself: not a refusal, the next attempt is at once
            mUnproven = 0;
        }
        if (smaller || queued() > 0) {
            scheduleReconnect();
        }
    }

    /**
     * A connection from the peer arrives. From a smaller peer (we are the larger host) the path decides; from a
     * larger peer the stack refuses it and calls the path back if it is down ({@code CoreStack.accept}), which is
     * all the path sees of it.
     *
     * @return the accepted connection, or null if refused
     */
    FakeTransport.FakeConnection incoming() {
        FakeTransport.FakeConnection r = incoming0();
        check();
        return r;
    }

    private FakeTransport.FakeConnection incoming0() {
        step("incoming connection from the " + (smaller ? "larger" : "smaller") + " peer");
        if (smaller) {
            path.connectIfDown();
            if (mState == PathState.DOWN) {
                // answered at once: a reconnect waiting out its backoff is cancelled (the backoff keeps its size)
                mPending = false;
                expectConnect("a poke from the larger peer");
            }
            return null;
        }
        FakeTransport.FakeConnection c = transport.newConnection(false, local, peer);
        ConnectionHandler h = path.connector().accept(c);
        if (mState == PathState.UP || mState == PathState.DISCONNECTING) {
            expect(h == null, "a second connection is refused while " + mState);
            return null;
        }
        expect(h != null, "a connection from the smaller peer is taken while " + mState);
        expect(handlersSeen.put(h, true) == null, "accept returns a new handler");
        c.handler = h;
        mCurrent = h;
        up(c);
        return c;
    }

    /** The timer thread runs what is due next (virtual time jumps to it). */
    void timerFires() {
        timerFires0();
        check();
    }

    private void timerFires0() {
        List<VirtualScheduler.Task> due = env.scheduler.pending();
        step("timer fires: " + (due.isEmpty() ? "-" : due.get(0)));
        long pings = env.counters.get(Counter.ACK_PING_SENT);
        FakeTransport.FakeConnection cur = liveCurrent();
        int before = cur == null ? 0 : cur.transmitRequests;
        VirtualScheduler.Task t = env.scheduler.runOne();
        expect(t != null, "test bug: nothing was scheduled");
        if (t.periodNanos > 0) {
            // maintenance: with liveness off, only the 200 ms acknowledgement fallback, on the wall clock; so the
            // model accepts a ping or none, but a ping must be one the model allows
            expect(mMaintenance, "a maintenance tick while the path is " + mState);
            if (env.counters.get(Counter.ACK_PING_SENT) != pings) {
                expect(mState == PathState.UP && !mSent.isEmpty(), "an acknowledgement ping while " + mState
                        + " with " + mSent.size() + " sent");
                expect(requestAck(cur, before), "an acknowledgement ping the model does not allow");
            }
            return;
        }
        if (mPending) {
            mPending = false;
            if (mState == PathState.DOWN) {
                expectConnect("a due reconnect");
            }
        }
    }

    /** The transport's I/O thread asks connection {@code c} to write, with room for {@code capacity} frames. */
    List<RecordingSink.Frame> transmit(FakeTransport.FakeConnection c, int capacity) {
        List<RecordingSink.Frame> r = transmit0(c, capacity);
        check();
        return r;
    }

    private List<RecordingSink.Frame> transmit0(FakeTransport.FakeConnection c, int capacity) {
        step("transmit on " + c + ", room for " + capacity + " frames");
        RecordingSink sink = new RecordingSink(c, capacity);
        c.handler.transmit(sink);
        List<RecordingSink.Frame> frames = sink.frames;
        if (c.handler != mCurrent || mState != PathState.UP) {
            expect(frames.isEmpty(), "nothing is written on a connection the path is not using: " + frames);
            return frames;
        }
        int i = 0;
        if (mCongQueued && capacity > 0) {          // a map waits for a sink with room (drained, FrameSink#isDrained)
            expect(frames.size() > i, "the congestion map goes first, nothing written");
            RecordingSink.Frame f = frames.get(i++);
            expect(f.flags() == RdsHeader.FLAG_CONG_BITMAP && f.sequence() == 0 && f.length() == CongestionMap.BYTES,
                    "the congestion map goes first, got " + f);
            mCongQueued = false;
        }
        while (i < capacity && !mSend.isEmpty()) {
            long s = mSend.pollFirst();
            expect(frames.size() > i, "expected message " + s + " to be written, frames " + frames);
            RecordingSink.Frame f = frames.get(i++);
            int flags = mRetransmit.contains(s) ? RdsHeader.FLAG_RETRANSMITTED : 0;
            long ack = mNextRx == 0 ? 0 : mNextRx - 1;
            expect(f.sequence() == s && f.flags() == flags && f.ack() == ack,
                    "expected message " + s + " flags " + flags + " ack " + ack + ", written " + f);
            String kind = mProtocol.get(s);
            expect(kind == null ? f.sport() == SPORT && f.dport() == DPORT : kindMatches(kind, f),
                    "message " + s + " is " + (kind == null ? "a socket's" : kind) + ", written " + f);
            mAckOwed = false;
            if ("ack-only".equals(kind)) {
                mAckOnlyQueued = false;
            } else {
                mSent.addLast(s);
            }
        }
        expect(frames.size() == i, "written " + frames + ", expected " + i + " frames");
        mLastPassEnd = c.streamOffset;
        return frames;
    }

    private static boolean kindMatches(String kind, RecordingSink.Frame f) {
        return switch (kind) {
            case "probe" -> f.sport() == ConnectionPath.PROBE_PORT && f.dport() == 0;
            case "ack-only" -> f.sport() == 0 && f.dport() == 0;
            default -> f.sport() == Integer.parseInt(kind.substring("ping from ".length())) && f.dport() == 0;
        };
    }

    /** The transport reports that connection {@code c} sent everything up to {@code offset}. */
    void transmitted(FakeTransport.FakeConnection c, long offset) {
        transmitted0(c, offset);
        check();
    }

    private void transmitted0(FakeTransport.FakeConnection c, long offset) {
        step("transmitted up to " + offset + " on " + c);
        c.reported = Math.max(c.reported, offset);
        int before = c.transmitRequests;
        long pings = env.counters.get(Counter.ACK_PING_SENT);
        c.handler.onTransmitted(offset);
        boolean asked = false;
        if (c.handler == mCurrent && offset >= mLastPassEnd && !mPeerAcks) {
            asked = requestAck(c, before);    // all written left: ask a peer not known to acknowledge
        }
        expect(env.counters.get(Counter.ACK_PING_SENT) == pings + (asked ? 1 : 0),
                "ack_ping_sent " + env.counters.get(Counter.ACK_PING_SENT) + ", model " + (pings + (asked ? 1 : 0)));
    }

    /**
     * The peer (as a kernel does) answers a ping from {@code port} with a pong on connection {@code c}: if it is
     * an outstanding acknowledgement ping, everything up to it is released.
     */
    void pong(FakeTransport.FakeConnection c, int port) {
        step("pong to port " + port + " on " + c);
        receive(c, new RdsHeader().sequence(mPeerSeq++).sourcePort(0).destinationPort(port));
        check();
    }

    /** The peer (as rds4j does) sends an ack-only message acknowledging up to {@code upTo} on connection {@code c}. */
    void ack(FakeTransport.FakeConnection c, long upTo) {
        step("ack-only up to " + upTo + " on " + c);
        receive(c, new RdsHeader().sequence(mPeerSeq++).ack(upTo).sourcePort(0).destinationPort(0));
        check();
    }

    /** Feeds one message of the peer to {@code c} and applies the receive rules to the model. */
    private void receive(FakeTransport.FakeConnection c, RdsHeader h) {
        expect(h.length() == 0, "test bug: only empty messages");
        ByteBuffer b = ByteBuffer.allocate(RdsHeader.SIZE);
        h.encode(b);
        b.flip();
        long acksReceived = env.counters.get(Counter.ACK_RECEIVED);
        long acksExpected = acksReceived;
        c.bytesDelivered = true;
        c.handler.onBytes(b);
        if (h.ack() != 0) {
            mPeerAcks = true;
            releaseUpTo(h.ack());
            acksExpected++;
        }
        mNextRx = h.sequence() + 1;
        boolean ackOnly = h.sourcePort() == 0 && h.destinationPort() == 0;
        if (!ackOnly) {
            mAckOwed = true;
        }
        if (h.sourcePort() == 0) {
            for (int i = 0; i < mAckPing.length; i++) {
                if (mPorts[i] == h.destinationPort() && mAckPing[i] != 0) {
                    releaseUpTo(mAckPing[i]);
                    mAckPing[i] = 0;
                    acksExpected++;
                    for (int j = 0; j < mQuarantine.length; j++) {
                        if (mQuarantine[j] != 0 && mQuarantine[j] <= mPingEpoch[i]) {
                            mQuarantine[j] = 0;     // the peer answers in order: no older pong can follow
                        }
                    }
                }
            }
        }
        expect(env.counters.get(Counter.ACK_RECEIVED) == acksExpected, "ack_received");
        // after the batch: an ack-only message if the peer waits for one and nothing else goes
        if (c.handler == mCurrent && mState == PathState.UP && mAckOwed && mPeerAcks && !mAckOnlyQueued
                && mSend.isEmpty()) {
            mAckOnlyQueued = true;
            mProtocol.put(mNextTx, "ack-only");
            mSend.addLast(mNextTx++);
        }
    }

    private boolean isPing(long seq) {
        String kind = mProtocol.get(seq);
        return kind != null && kind.startsWith("ping from ");
    }

    /** The fake hands out the same ports for any address. */
    private static final java.net.InetAddress LOCAL_FOR_PORTS = java.net.InetAddress.getLoopbackAddress();

    private void releaseUpTo(long seq) {
        while (!mSent.isEmpty() && mSent.peekFirst() <= seq) {
            long s = mSent.pollFirst();
            if (!mProtocol.containsKey(s)) {
                mReleased.add(s);
            }
        }
    }

    /**
     * The path asks for an acknowledgement (not forced): a ping from a free reserved port, unless an outstanding
     * one already covers every sent message. Returns whether it did.
     */
    private boolean requestAck(FakeTransport.FakeConnection c, int transmitRequestsBefore) {
        if (mState != PathState.UP) {
            return false;
        }
        long newest = 0;
        int outstanding = 0;
        int free = -1;
        for (int i = 0; i < mAckPing.length; i++) {
            int slot = (mNextAckSlot + i) % mAckPing.length;
            if (mAckPing[slot] != 0) {
                outstanding++;
                newest = Math.max(newest, mAckPing[slot]);
            } else if (mQuarantine[slot] == 0 && free < 0) {
                free = slot;
            }
        }
        boolean covered = mSent.isEmpty() || (newest != 0 && newest >= mSent.peekLast());
        if (outstanding >= 4 || covered) {
            return false;
        }
        if (free < 0) {                                  // all busy or quarantined: the stack reserves 4 more
            int have = mPorts.length;
            mPorts = env.ackPorts(LOCAL_FOR_PORTS, have + 4);
            mAckPing = java.util.Arrays.copyOf(mAckPing, mPorts.length);
            mPingEpoch = java.util.Arrays.copyOf(mPingEpoch, mPorts.length);
            mQuarantine = java.util.Arrays.copyOf(mQuarantine, mPorts.length);
            free = have;
        }
        long seq = mNextTx++;
        mProtocol.put(seq, "ping from " + mPorts[free]);
        mSend.addLast(seq);
        mAckPing[free] = seq;
        mPingEpoch[free] = mEpoch;
        mNextAckSlot = (free + 1) % mAckPing.length;
        expect(c != null && c.transmitRequests == transmitRequestsBefore + 1, "a queued ping asks for transmit");
        return true;
    }

    /** Connection {@code c} receives a header announcing 4 GiB: a protocol error, the path drops it. */
    void protocolError(FakeTransport.FakeConnection c) {
        protocolError0(c);
        check();
    }

    private void protocolError0(FakeTransport.FakeConnection c) {
        step("protocol error on " + c);
        expect(corrupted.add(c), "test bug: corrupting " + c + " twice");
        ByteBuffer bad = ByteBuffer.allocate(RdsHeader.SIZE);
        new RdsHeader().sequence(1).length(0xFFFF_FFFFL).sourcePort(1).destinationPort(2).encode(bad);
        bad.flip();
        int aborts = c.abortCalls;
        long errors = env.counters.get(Counter.RECV_PROTOCOL_ERROR);
        c.bytesDelivered = true;
        c.handler.onBytes(bad);
        expect(env.counters.get(Counter.RECV_PROTOCOL_ERROR) == errors + 1, "recv_protocol_error counted");
        if (c.handler == mCurrent) {
            mState = PathState.DISCONNECTING;
            expect(c.abortCalls == aborts + 1, "the dropped connection is aborted, " + c);
        }
    }

    /** The local congestion map changed. */
    void congestionUpdate() {
        congestionUpdate0();
        check();
    }

    private void congestionUpdate0() {
        step("congestion update");
        FakeTransport.FakeConnection cur = liveCurrent();
        int before = cur == null ? 0 : cur.transmitRequests;
        connection.queueCongestionUpdate();
        if (mState == PathState.UP) {
            mCongQueued = true;
            expect(cur.transmitRequests == before + 1, "a congestion update asks for transmit");
        }
    }

    // ---------------------------------------------------------------------------------------- model helpers

    int queued() {
        return mSend.size() + mSent.size();
    }

    private void up(FakeTransport.FakeConnection c) {
        mState = PathState.UP;
        mUpAt = env.nanoTime();
        // A reconnect (or re-poke) still pending from before is moot now, and the backoff restarts, unless
        // QUICK_RETRIES connections in a row closed before proving themselves (closes0 counts them).
        if (mUnproven < ReconnectTimer.QUICK_RETRIES) {
            mCeiling = 0;
        }
        mUnproven++;
        mPending = false;
        mCongQueued = true;
        // the multipath probe on every UP of path 0, as kernels from 7.0 do (the peer's offer and generation again);
        // an earlier connection's probe that was never written goes (written ones are resent, marked retransmitted)
        mSend.removeIf(seq -> "probe".equals(mProtocol.get(seq)) && !mRetransmit.contains(seq));
        mProtocol.put(mNextTx, "probe");
        mSend.addLast(mNextTx++);
        List<VirtualScheduler.Task> h = env.scheduler.history();
        expect(h.size() == tasksSeen + 1, "the maintenance timer starts when UP (" + (h.size() - tasksSeen)
                + " new tasks)");
        VirtualScheduler.Task t = h.get(tasksSeen++);
        expect(t.periodNanos > 0, "the maintenance timer is periodic: " + t);
        mMaintenance = true;
        expect(c.transmitRequests == 1, "a path that comes up asks for transmit once, " + c);
        expect(c.closeCalls == 0 && c.abortCalls == 0, "the connection that came up is kept, " + c);
    }

    private void expectConnect(String why) {
        mAttempts++;
        expect(transport.attempts.size() == mAttempts,
                why + " starts connecting: expected " + mAttempts + " connect calls, got " + transport.attempts.size());
        FakeTransport.Attempt a = transport.attempts.get(mAttempts - 1);
        expect(a.local.equals(local) && a.peer.equals(peer), "connect from " + a.local + " to " + a.peer);
        expect(handlersSeen.put(a.handler, true) == null, "every attempt gets a new handler");
        mCurrent = a.handler;
        mState = PathState.CONNECTING;
    }

    /** The path must schedule a reconnect now (unless one is pending), with the backoff's delay. */
    private void scheduleReconnect() {
        if (mPending) {
            return;
        }
        long delay;
        if (mCeiling == 0) {
            delay = 0;
            mCeiling = FakeEnvironment.MIN_NANOS;
        } else {
            expect(env.draws.size() == drawsSeen + 1, "a later reconnect draws a random delay");
            FakeEnvironment.Draw d = env.draws.get(drawsSeen++);
            expect(d.bound() == mCeiling, "the delay is drawn below the ceiling " + mCeiling + ", was " + d);
            delay = d.value();
            mCeiling = Math.min(2 * mCeiling, FakeEnvironment.MAX_NANOS);
        }
        List<VirtualScheduler.Task> h = env.scheduler.history();
        expect(h.size() == tasksSeen + 1, "a reconnect is scheduled (" + (h.size() - tasksSeen) + " new tasks)");
        VirtualScheduler.Task t = h.get(tasksSeen++);
        expect(t.delayNanos == delay && t.periodNanos == 0, "the reconnect delay is " + delay + ", scheduled " + t);
        mPending = true;
    }

    // ---------------------------------------------------------------------------------------- invariants

    /** Compares the path with the model; called after every operation. */
    void check() {
        expect(path.state() == mState, "state " + path.state() + ", model " + mState);
        long nextTx = path.nextTxSeq();
        expect(nextTx >= lastNextTx, "nextTxSeq went back from " + lastNextTx + " to " + nextTx);
        lastNextTx = nextTx;
        expect(nextTx == mNextTx, "nextTxSeq " + nextTx + ", model " + mNextTx);
        expect(path.resets() == mResets, "resets " + path.resets() + ", model " + mResets);
        expect(env.counters.get(Counter.CONN_RESET) == mResets, "conn_reset counter, model " + mResets);
        expect(path.queuedMessages() == queued(), "queued " + path.queuedMessages() + ", model " + queued());

        // messages never lost, duplicated or reordered: the queues hold exactly the model's numbers, increasing
        List<OutgoingMessage> sent = queue("sent");
        List<OutgoingMessage> send = queue("unsent");
        expect(sequences(sent).equals(List.copyOf(mSent)), "written " + sequences(sent) + ", model " + mSent);
        expect(sequences(send).equals(List.copyOf(mSend)), "queued " + sequences(send) + ", model " + mSend);
        long prev = 0;
        for (OutgoingMessage m : concat(sent, send)) {
            expect(m.sequence() > prev, "sequence numbers increase along the queues: " + sequences(sent) + " "
                    + sequences(send));
            prev = m.sequence();
            expect(m.retransmit == mRetransmit.contains(m.sequence()), "retransmit flag of " + m);
        }
        expect(owner.released.equals(mReleased), "released " + owner.released + ", model " + mReleased);

        // the handler in use, and the connections
        expect(field("current") == mCurrent, "the path's current handler is not the model's");
        boolean attemptOutstanding = transport.pendingAttempts().stream().anyMatch(a -> a.handler == mCurrent);
        expect((mState == PathState.CONNECTING) == attemptOutstanding,
                "CONNECTING iff the current attempt is outstanding (" + mState + ")");
        expect(transport.attempts.size() == mAttempts,
                "connect calls: " + transport.attempts.size() + ", model " + mAttempts);
        List<FakeTransport.FakeConnection> live = transport.live();
        expect(live.size() <= 1, "at most one live transport connection: " + live);
        expect(live.size() == (mState == PathState.UP ? 1 : 0), "live connections " + live + " while " + mState);
        if (mState == PathState.UP) {
            expect(live.get(0).handler == mCurrent, "the live connection is the current one");
        }

        // timers and randomness: nothing beyond what the model accounted for
        expect(env.draws.size() == drawsSeen, "unexpected random draws " + env.draws.subList(drawsSeen,
                env.draws.size()));
        expect(env.scheduler.history().size() == tasksSeen, "unexpected scheduled tasks "
                + env.scheduler.history().subList(tasksSeen, env.scheduler.history().size()));
        List<VirtualScheduler.Task> reconnects = env.scheduler.pending().stream().filter(t -> t.periodNanos == 0)
                .toList();
        long periodic = env.scheduler.pending().stream().filter(t -> t.periodNanos > 0).count();
        expect(reconnects.size() <= 1, "at most one reconnect pending: " + reconnects);
        if (mPending) {
            expect(reconnects.size() == 1, "a reconnect is pending");
        }
        expect(periodic == (mMaintenance ? 1 : 0), periodic + " maintenance timers while " + mState);
        expect(path.nextRxSeq() == mNextRx, "nextRxSeq " + path.nextRxSeq() + ", model " + mNextRx);
        expect(connection.peerAcks().acknowledges() == mPeerAcks, "peerAcks, model " + mPeerAcks);
        expect(env.counters.get(Counter.RECV_DROP_NO_SOCK) == 0,
                "no data message reached a socket");
        expect(owner.releasedCount == owner.released.size(), "released counts " + owner.releasedCount
                + " messages, recycled " + owner.released.size());
    }

    // ---------------------------------------------------------------------------------------- plumbing

    /** The live connection the model says is current, if UP. */
    FakeTransport.FakeConnection liveCurrent() {
        for (FakeTransport.FakeConnection c : transport.live()) {
            if (c.handler == mCurrent) {
                return c;
            }
        }
        return null;
    }

    FakeTransport.Attempt attempt(int i) {
        return transport.attempts.get(i);
    }

    List<String> trace() {
        return trace;
    }

    private void step(String s) {
        trace.add(s);
    }

    void expect(boolean ok, String what) {
        if (!ok) {
            StringBuilder b = new StringBuilder(what).append("\n  ").append(this).append("\n  after:");
            int from = Math.max(0, trace.size() - 40);
            for (int i = from; i < trace.size(); i++) {
                b.append("\n    ").append(i + 1).append(". ").append(trace.get(i));
            }
            throw new AssertionError(b.toString());
        }
    }

    /** The path's {@link SendQueue}'s messages written and held, or those not yet written (the test's thread owns it). */
    private List<OutgoingMessage> queue(String name) {
        return SendQueueView.messages((SendQueue) field("queue"), name.equals("sent"));
    }

    private Object field(String name) {
        try {
            Field f = ConnectionPath.class.getDeclaredField(name);
            f.setAccessible(true);
            return f.get(path);
        } catch (ReflectiveOperationException e) {
            throw new AssertionError("ConnectionPath." + name + " moved; adapt PathHarness", e);
        }
    }

    private static List<Long> sequences(List<OutgoingMessage> l) {
        return l.stream().map(OutgoingMessage::sequence).toList();
    }

    private static List<OutgoingMessage> concat(List<OutgoingMessage> a, List<OutgoingMessage> b) {
        List<OutgoingMessage> l = new ArrayList<>(a);
        l.addAll(b);
        return l;
    }

    private static InetAddress address(int a, int b, int c, int d) {
        try {
            return InetAddress.getByAddress(new byte[] {(byte) a, (byte) b, (byte) c, (byte) d});
        } catch (UnknownHostException e) {
            throw new AssertionError(e);
        }
    }
}
