package org.rds4j.core.conn;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.Iterator;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.rds4j.RdsDatagram;
import org.rds4j.core.RdsCounters.Counter;
import org.rds4j.core.cong.CongestionMap;
import org.rds4j.core.spi.ConnectionHandler;
import org.rds4j.core.spi.FrameSink;
import org.rds4j.core.spi.TransportConnection;
import org.rds4j.core.wire.ExtensionHeaders;
import org.rds4j.core.wire.RdsHeader;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One path of a connection: at most one transport connection at a time, the queue of messages to send on it, the
 * messages sent but not yet acknowledged, and the two sequence counters. The kernel's {@code rds_conn_path}.
 *
 * <p>Sequence numbers belong to the path, not to a transport connection: they survive reconnects, so that messages
 * sent again after a drop keep their numbers (and carry {@link RdsHeader#FLAG_RETRANSMITTED}) and the receiver can
 * drop those it already has. Transmit starts at 1; the receiver starts expecting 0.
 *
 * <p>A sent message is kept until the peer is known to have it (see docs/reliability.md): an rds4j peer says so in
 * h_ack, cumulatively; a kernel peer, which never acknowledges over TCP, answers a ping, and its pong proves that
 * every message sent before the ping arrived. Only then is the message released and its bytes returned to the
 * sending socket's budget; until then a reset sends it again.
 *
 * <p>Threads (docs/threading.md): application threads push messages onto the path's inbox, a lock-free stack, and
 * ask the transport for a transmit pass; they take no lock while the path is up. Everything else, the queues, the
 * sequence numbers, the acknowledgement state, belongs to whoever holds this object's monitor: in steady state only
 * the I/O thread of the current connection (transmit, receive), now and then the stack's timer (reconnect,
 * maintenance), and rarely an application thread (connecting a path that is down, cancel, close). The inbox is
 * drained only under the monitor, so it has a single consumer. Lock order: a path may call into a socket while
 * holding its monitor; sockets never call into a path while holding their own lock.
 */
public final class ConnectionPath {
    private static final Logger log = LoggerFactory.getLogger(ConnectionPath.class);

    /** The source port of the kernel's multipath probe ping ({@code RDS_FLAG_PROBE_PORT}). */
    public static final int PROBE_PORT = 1;
    static final ByteBuffer EMPTY = ByteBuffer.allocate(0).asReadOnlyBuffer();
    /** Without an acknowledgement for this long while holding sent messages, ask again with a ping. */
    static final long ACK_FALLBACK_NANOS = TimeUnit.MILLISECONDS.toNanos(200);
    private static final long MAINTENANCE_PERIOD_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

    private final Connection connection;
    private final int index;
    private final ConnectionEnvironment env;
    private final ReconnectBackoff backoff;
    private final long livenessNanos;

    private static final VarHandle INBOX;

    static {
        try {
            INBOX = MethodHandles.lookup().findVarHandle(ConnectionPath.class, "inbox", OutgoingMessage.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** Bytes one transmit pass writes at most before it yields the I/O thread to other connections. */
    static final long MAX_PASS_BYTES = 1 << 20;

    /** Messages pushed by application threads, newest first (a Treiber stack, taken whole). */
    @SuppressWarnings("unused") private volatile OutgoingMessage inbox;
    private final ArrayDeque<OutgoingMessage> sendQueue = new ArrayDeque<>();
    private final ArrayDeque<OutgoingMessage> sentQueue = new ArrayDeque<>();
    private final RdsHeader txHeader = new RdsHeader();
    private final ByteBuffer txHeaderBytes = ByteBuffer.allocate(RdsHeader.SIZE);
    private final byte[] congestionSnapshot = new byte[CongestionMap.BYTES];

    /** Written under the monitor; read without it by senders deciding whether the path needs connecting. */
    private volatile PathState state = PathState.DOWN;
    private volatile PathConnection current;
    private boolean reconnectPending;
    private ScheduledFuture<?> reconnectTask;
    private Object reconnectToken;
    private boolean congestionUpdateQueued;
    private boolean shutdown;
    private boolean probeSent;
    private long nextTxSeq = 1;
    private long nextRxSeq;
    private long resets;

    // Acknowledgement state (see the class comment and docs/reliability.md).
    private final AckPings ackPings;
    /** A message the peer keeps for resending arrived since our last transmission (which carried our h_ack). */
    private boolean ackOwed;
    /** The peer asked for an acknowledgement now (ACK_REQUIRED). */
    private boolean ackRequested;
    private boolean ackOnlyQueued;
    /** The one ack-only message, reused: at most one is queued at a time, and it is never kept once written. */
    private final OutgoingMessage ackOnlyMessage = OutgoingMessage.ackOnly();
    private long lastPassEnd;
    private long lastAckProgressNanos;
    private long lastHeardNanos;
    private long lastLivenessPingNanos;
    private ScheduledFuture<?> maintenance;

    ConnectionPath(Connection connection, int index) {
        this.connection = connection;
        this.index = index;
        this.env = connection.env();
        this.backoff = new ReconnectBackoff(env.reconnectMinNanos(), env.reconnectMaxNanos(), env::random);
        this.livenessNanos = env.livenessNanos();
        this.ackPings = new AckPings(env, connection.local(), this.connection + " path " + index);
    }

    public Connection connection() {
        return connection;
    }

    public int index() {
        return index;
    }

    public PathState state() {
        return state;
    }

    public synchronized long nextTxSeq() {
        return nextTxSeq;
    }

    public synchronized long nextRxSeq() {
        return nextRxSeq;
    }

    /** Messages queued and not yet written, plus written and not yet acknowledged. */
    public synchronized int queuedMessages() {
        drainInboxLocked();
        return sendQueue.size() + sentQueue.size();
    }

    /** How many times this path was reset. */
    public synchronized long resets() {
        return resets;
    }

    // ------------------------------------------------------------------------------------------------ sending

    /**
     * Queues a message and starts transmission: at once if the path is up, after connecting if it is down. Any
     * thread; no lock while the path is up. The message gets its sequence number when the path takes it off the
     * inbox, in the order messages were pushed.
     */
    public void enqueue(OutgoingMessage m) {
        OutgoingMessage top;
        do {
            top = inbox;
            m.next = top;
        } while (!INBOX.compareAndSet(this, top, m));
        // Read after the push: if the path is still up, the connection's next pass takes the message; if it went
        // down after this read, closed() drains the inbox after setting DOWN, so it sees the message.
        PathConnection pc = current;
        if (state == PathState.UP && pc != null) {
            pc.requestTransmit();
            return;
        }
        PathConnection kick;
        synchronized (this) {
            drainInboxLocked();
            kick = kickLocked();
        }
        if (kick != null) {
            kick.requestTransmit();
        }
    }

    /** Moves the inbox onto the send queue, oldest first, numbering the messages. Caller holds the monitor. */
    private void drainInboxLocked() {
        OutgoingMessage m = (OutgoingMessage) INBOX.getAndSet(this, (OutgoingMessage) null);
        if (m == null) {
            return;
        }
        OutgoingMessage reversed = null;              // the stack is newest first: reverse it
        while (m != null) {
            OutgoingMessage next = m.next;
            m.next = reversed;
            reversed = m;
            m = next;
        }
        int n = 0;
        while (reversed != null) {
            OutgoingMessage next = reversed.next;
            reversed.next = null;
            reversed.sequence = nextTxSeq++;
            sendQueue.addLast(reversed);
            reversed = next;
            n++;
        }
        env.statistics().add(Counter.SEND_QUEUED, n);   // once per batch: senders share no counter
    }

    private PathConnection enqueueLocked(OutgoingMessage m) {
        drainInboxLocked();                            // keep the numbering in push order
        m.sequence = nextTxSeq++;
        sendQueue.addLast(m);
        return kickLocked();
    }

    /** Asks for a congestion-map message ahead of the queued messages. */
    void queueCongestionUpdate() {
        PathConnection kick;
        synchronized (this) {
            if (state != PathState.UP) {
                return;            // every path that comes up sends the current map first anyway
            }
            congestionUpdateQueued = true;
            env.statistics().increment(Counter.CONG_UPDATE_QUEUED);
            kick = current;
        }
        kick.requestTransmit();
    }

    /** Returns the connection to kick if up; starts connecting if down. Caller holds the monitor. */
    private PathConnection kickLocked() {
        if (state == PathState.UP) {
            return current;
        }
        if (state == PathState.DOWN && !reconnectPending) {
            connectLocked();
        }
        return null;
    }

    /** Called on the transport's I/O thread: write queued frames while the connection has room. */
    void transmit(PathConnection pc, FrameSink sink) {
        synchronized (this) {
            if (pc != current || state != PathState.UP) {
                return;
            }
            if (congestionUpdateQueued) {
                congestionUpdateQueued = false;
                writeCongestionMap(sink);
            }
            drainInboxLocked();
            boolean askForAck = connection.peerAcks();
            long passStart = sink.streamOffset();
            OutgoingMessage m;
            while (sink.isWritable() && (m = sendQueue.pollFirst()) != null) {
                if (m.owner != null && m.owner.isClosed()) {
                    m.next = null;                     // closing a socket discards what it has queued, as the kernel
                    m.owner.released(m, m, 1, m.length());
                    continue;
                }
                if (sink.streamOffset() - passStart >= MAX_PASS_BYTES) {
                    sendQueue.addFirst(m);              // bounded pass: let other connections of this thread go
                    current.requestTransmit();
                    break;
                }
                m.header(txHeader, ackValue(), askForAck);
                txHeaderBytes.clear();
                txHeader.encode(txHeaderBytes);
                txHeaderBytes.flip();
                sink.write(txHeaderBytes, m.payload);
                ackOwed = false;              // the h_ack just written covers everything received so far
                if (m.retained) {
                    sentQueue.addLast(m);
                } else {
                    ackOnlyQueued = false;
                    env.statistics().increment(Counter.ACK_SENT);
                }
            }
            lastPassEnd = sink.streamOffset();
        }
    }

    /** The cumulative acknowledgement we send: the last sequence number received on this path, 0 before any. */
    private long ackValue() {
        return nextRxSeq == 0 ? 0 : nextRxSeq - 1;
    }

    /**
     * The congestion map goes first on every new connection and after every change: sequence 0, no ports, flags
     * exactly {@link RdsHeader#FLAG_CONG_BITMAP}, the 8192 bytes of the local address's map. It takes no sequence
     * number and is never resent; a fresh one follows any reconnect.
     */
    private void writeCongestionMap(FrameSink sink) {
        connection.localMap().copyTo(congestionSnapshot);
        txHeader.clear().length(CongestionMap.BYTES).flags(RdsHeader.FLAG_CONG_BITMAP);
        txHeaderBytes.clear();
        txHeader.encode(txHeaderBytes);
        txHeaderBytes.flip();
        sink.write(txHeaderBytes, ByteBuffer.wrap(congestionSnapshot));
    }

    /**
     * Everything written up to {@code streamOffset} left the transport. If that is all we wrote and the peer does
     * not acknowledge by itself, ask it with a ping.
     */
    void transmitted(PathConnection pc, long streamOffset) {
        PathConnection kick = null;
        synchronized (this) {
            if (pc == current && streamOffset >= lastPassEnd && !connection.peerAcks()) {
                kick = requestAckLocked(false);
            }
        }
        if (kick != null) {
            kick.requestTransmit();
        }
    }

    // ------------------------------------------------------------------------------------------------ acknowledgements

    /**
     * Queues a ping from a free reserved port, unless one outstanding already covers every sent message (or
     * {@code force}, for liveness, says to ping anyway). Returns the connection to kick.
     */
    private PathConnection requestAckLocked(boolean force) {
        if (state != PathState.UP) {
            return null;
        }
        OutgoingMessage tail = sentQueue.peekLast();
        int slot = ackPings.slotForPing(tail == null ? 0 : tail.sequence, force);
        if (slot < 0) {
            return null;
        }
        OutgoingMessage ping = OutgoingMessage.ping(ackPings.port(slot));
        PathConnection kick = enqueueLocked(ping);
        ackPings.pingQueued(slot, ping.sequence);
        lastAckProgressNanos = env.nanoTime();
        env.statistics().increment(Counter.ACK_PING_SENT);
        return kick;
    }

    /** The peer has everything up to {@code seq} on this path: release those messages, oldest first. */
    private void releaseUpTo(long seq) {
        OutgoingMessage m;
        boolean any = false;
        // Consecutive messages of one socket go back together, as one chain: one call, one wake-up per batch.
        MessageOwner run = null;
        OutgoingMessage first = null;
        OutgoingMessage last = null;
        int count = 0;
        long bytes = 0;
        while ((m = sentQueue.peekFirst()) != null && Long.compareUnsigned(m.sequence, seq) <= 0) {
            sentQueue.pollFirst();
            any = true;
            MessageOwner o = m.owner;
            if (o == null) {
                continue;
            }
            if (o != run) {
                if (run != null) {
                    run.released(first, last, count, bytes);
                }
                run = o;
                first = null;
                count = 0;
                bytes = 0;
            }
            m.next = null;
            if (first == null) {
                first = m;
            } else {
                last.next = m;
            }
            last = m;
            count++;
            bytes += m.length();
        }
        if (run != null) {
            run.released(first, last, count, bytes);
        }
        if (any) {
            lastAckProgressNanos = env.nanoTime();
        }
    }

    /** After a batch of received bytes: send an ack-only message if the peer waits for one and nothing else goes. */
    void afterReceive(PathConnection pc) {
        PathConnection kick = null;
        synchronized (this) {
            lastHeardNanos = env.nanoTime();
            boolean wanted = ackRequested || (ackOwed && connection.peerAcks());
            if (pc == current && state == PathState.UP && wanted && !ackOnlyQueued && sendQueue.isEmpty()
                    && inbox == null) {
                ackRequested = false;
                ackOnlyQueued = true;
                ackOnlyMessage.retransmit = false;
                kick = enqueueLocked(ackOnlyMessage);
            }
        }
        if (kick != null) {
            kick.requestTransmit();
        }
    }

    /** The peer restarted (new GEN_NUM): start the sequences again and discard what it never acknowledged. */
    synchronized void peerRestarted() {
        int flushed = 0;
        OutgoingMessage m;
        while ((m = sentQueue.pollFirst()) != null) {
            flushed++;
            if (m.owner != null) {
                m.owner.failed(m, destination(m), RdsDatagram.Failure.PEER_RESTARTED);
            }
        }
        nextTxSeq = 1;
        nextRxSeq = 0;
        // Messages queued and not yet sent keep their old numbers in the kernel, which frees by TCP position and
        // does not mind; rds4j releases by number, so it renumbers them from 1, in order, keeping the path's
        // numbers rising. Queued acknowledgement pings go: their ports are quarantined below.
        drainInboxLocked();
        sendQueue.removeIf(q -> q.ackPing);
        for (OutgoingMessage q : sendQueue) {
            q.sequence = nextTxSeq++;
            q.retransmit = false;
        }
        ackPings.connectionReset();
        env.statistics().add(Counter.SEND_FLUSHED, flushed);
        log.info("{} path {}: the peer restarted (new generation); {} unacknowledged messages discarded, as the"
                + " kernel does", connection, index, flushed);
    }

    /**
     * Drops every message of {@code owner} to {@code port} of the peer, queued or sent and unacknowledged: the
     * kernel's RDS_CANCEL_SENT_TO. Returns how many.
     */
    public int cancel(MessageOwner owner, int port) {
        int n = 0;
        synchronized (this) {
            drainInboxLocked();
            n += cancelFrom(sendQueue, owner, port);
            n += cancelFrom(sentQueue, owner, port);
        }
        return n;
    }

    private int cancelFrom(ArrayDeque<OutgoingMessage> queue, MessageOwner owner, int port) {
        int n = 0;
        for (Iterator<OutgoingMessage> it = queue.iterator(); it.hasNext(); ) {
            OutgoingMessage m = it.next();
            if (m.owner == owner && m.destinationPort == port) {
                it.remove();
                owner.failed(m, destination(m), RdsDatagram.Failure.CANCELLED);   // the owner recycles it
                n++;
            }
        }
        return n;
    }

    private InetSocketAddress destination(OutgoingMessage m) {
        return new InetSocketAddress(connection.peer(), m.destinationPort);
    }

    // ------------------------------------------------------------------------------------------------ receiving

    /** Whether a message with this header would be dropped as a duplicate; a check, no state change. */
    synchronized boolean isDuplicate(RdsHeader h) {
        return h.hasFlag(RdsHeader.FLAG_RETRANSMITTED) && Long.compareUnsigned(h.sequence(), nextRxSeq) < 0;
    }

    /**
     * A complete message (not a congestion map) arrived on this path. The kernel's rule for duplicates: drop it if
     * it is marked retransmitted and its number is below the next expected; otherwise take it, and expect the number
     * after it next, even if that moves backwards (a restarted peer starts again at 1). Its h_ack releases what the
     * peer has. Pings, pongs and probes are answered or consumed here.
     *
     * @return true if the message is data for the socket at its destination port: the caller delivers it
     */
    boolean receive(RdsHeader h) {
        int sport = h.sourcePort();
        int dport = h.destinationPort();
        synchronized (this) {
            if (h.ack() != 0) {
                if (!connection.peerAcks()) {
                    connection.peerAcks(true);
                    log.debug("{} path {}: the peer acknowledges (h_ack)", connection, index);
                }
                releaseUpTo(h.ack());
                env.statistics().increment(Counter.ACK_RECEIVED);
            }
            if (isDuplicate(h)) {
                env.statistics().increment(Counter.RECV_DROP_OLD_SEQ);
                return false;
            }
            nextRxSeq = h.sequence() + 1;
            boolean ackOnly = sport == 0 && dport == 0;
            if (!ackOnly) {
                ackOwed = true;                     // the peer keeps this message until we acknowledge it
            }
            if (h.hasFlag(RdsHeader.FLAG_ACK_REQUIRED)) {
                ackRequested = true;                // only rds4j sets it over TCP
                connection.peerAcks(true);
            }
            if (sport == 0) {
                long answered = ackPings.pongArrived(dport);
                if (answered > 0) {
                    releaseUpTo(answered);          // the pong proves the peer had everything before the ping
                    env.statistics().increment(Counter.ACK_RECEIVED);
                }
                if (answered != AckPings.NOT_OURS) {
                    return false;                   // ours, or a late answer from before a reset: nothing more
                }
            }
        }
        if (dport == 0) {
            if (sport != 0) {                       // a pong to port 0 would answer itself forever: ignore it
                env.statistics().increment(Counter.RECV_PING);
                answerPing(sport);
                if (sport == PROBE_PORT) {
                    handshake(h);
                }
            }
            return false;
        }
        if (sport == 0 && dport == PROBE_PORT) {     // the pong to a multipath probe is the protocol's own
            handshake(h);
            return false;
        }
        return true;
    }

    /** A pong goes back on the same path, unless the pinging port is congested at the peer. */
    private void answerPing(int pingSourcePort) {
        if (connection.peerMap().isCongested(pingSourcePort)) {
            return;
        }
        env.statistics().increment(Counter.SEND_PONG);
        enqueue(OutgoingMessage.pong(pingSourcePort, Connection.SUPPORTED_PATHS, env.generation()));
    }

    /** Reads the multipath handshake extensions of a probe ping or pong. */
    private void handshake(RdsHeader h) {
        long npaths = ExtensionHeaders.find(h.extensions(), ExtensionHeaders.NPATHS);
        connection.peerPaths(npaths <= 0 ? 1 : (int) Math.min(npaths, 8));
        long gen = ExtensionHeaders.find(h.extensions(), ExtensionHeaders.GEN_NUM);
        if (gen > 0) {
            connection.peerGeneration(gen);
        }
    }

    /** A congestion map arrived: replace the peer's map and wake senders waiting on it. */
    void receiveCongestionMap(ByteBuffer map) {
        map.flip();
        CongestionMap peerMap = connection.peerMap();
        // Replacing and notifying under the map's monitor makes them one step for a sender that adds a port to its
        // monitor mask under the same monitor: its bit fires only for maps that arrive after it was added.
        synchronized (peerMap) {
            peerMap.replace(map);
            env.peerCongestionUpdated(connection.peer());
        }
        env.statistics().increment(Counter.CONG_UPDATE_RECEIVED);
        if (log.isDebugEnabled()) {
            log.debug("{} path {}: congestion map from the peer, congested ports {}", connection, index,
                    Arrays.toString(peerMap.congestedPorts()));
        }
    }

    // ------------------------------------------------------------------------------------------------ connecting

    /** Opens a transport connection, or on the larger address pokes the peer. Caller holds the monitor. */
    private void connectLocked() {
        if (shutdown || env.isClosing()) {
            return;
        }
        state = PathState.CONNECTING;
        PathConnection attempt = new PathConnection(this);
        current = attempt;
        log.debug("{} path {}: connecting", connection, index);
        connection.transport().connect(connection.local(), connection.peer(), attempt);
    }

    /** The transport connected an attempt of ours. */
    void connected(PathConnection pc, TransportConnection tc) {
        PathConnection kick = null;
        synchronized (this) {
            if (pc != current || state != PathState.CONNECTING) {
                tc.close();                          // stale: a newer attempt or an accepted connection won
                return;
            }
            if (connection.initiates()) {
                kick = upLocked(pc);
            } else {
                // The larger address only pokes: the peer resets this connection and connects back, and its
                // connection is the one that carries traffic. Close ours, wait for theirs.
                log.debug("{} path {}: poked the peer, waiting for it to connect back", connection, index);
                current = null;
                state = PathState.DOWN;
                tc.close();
                drainInboxLocked();
                if (!sendQueue.isEmpty()) {
                    scheduleReconnectLocked();       // poke again later if the peer does not come
                }
            }
        }
        if (kick != null) {
            kick.requestTransmit();
        }
    }

    /** The transport could not connect an attempt of ours. */
    void connectFailed(PathConnection pc, Throwable cause) {
        synchronized (this) {
            if (pc != current) {
                return;
            }
            log.debug("{} path {}: connect failed: {}", connection, index, cause.toString());
            current = null;
            state = PathState.DOWN;
            drainInboxLocked();
            if (connection.initiates() || !sendQueue.isEmpty()) {
                scheduleReconnectLocked();
            }
        }
    }

    /**
     * The peer (the smaller address) connected to us. Taken if the path has no connection, or only our own poke in
     * flight; refused while another connection is up or closing (the peer retries with backoff).
     *
     * @return the handler for the connection, or {@code null} to refuse it
     */
    public ConnectionHandler accept(TransportConnection tc) {
        PathConnection pc;
        synchronized (this) {
            if (shutdown || state == PathState.UP || state == PathState.DISCONNECTING) {
                log.debug("{} path {}: refusing a second connection while {}", connection, index, state);
                return null;
            }
            pc = new PathConnection(this);
            pc.attach(tc);
            current = pc;                            // a poke still in flight is now stale
            state = PathState.CONNECTING;
            upLocked(pc);
        }
        pc.requestTransmit();                        // the congestion map, then whatever queued while down
        return pc;
    }

    /** The peer connected to us while it should have waited for us (it has the larger address): call it back. */
    public void connectIfDown() {
        synchronized (this) {
            if (state == PathState.DOWN && !reconnectPending) {
                connectLocked();
            }
        }
    }

    private PathConnection upLocked(PathConnection pc) {
        state = PathState.UP;
        backoff.reset();
        cancelReconnectLocked();
        congestionUpdateQueued = true;               // the map goes first on every new connection
        long now = env.nanoTime();
        lastHeardNanos = now;
        lastLivenessPingNanos = now;
        lastAckProgressNanos = now;
        if (index == 0 && connection.peerPaths() == 0 && !probeSent) {
            // As the kernel does when it accepts a path of a peer whose path count it does not know: probe, so
            // that both ends settle on the same number of paths. The probe also carries our generation.
            probeSent = true;
            env.statistics().increment(Counter.SEND_PONG);
            enqueueLocked(OutgoingMessage.probe(Connection.SUPPORTED_PATHS, env.generation()));
        }
        startMaintenanceLocked();
        log.debug("{} path {}: up, {} messages queued", connection, index, sendQueue.size());
        return pc;
    }

    /**
     * The current connection closed: reset the path. Sent-but-unacknowledged messages go back to the front of the
     * queue, marked retransmitted, ahead of those never sent, so order is kept; sequence counters stay.
     */
    void closed(PathConnection pc, Throwable cause) {
        synchronized (this) {
            if (pc != current) {
                return;
            }
            current = null;
            boolean wasUp = state == PathState.UP || state == PathState.DISCONNECTING;
            state = PathState.DOWN;
            stopMaintenanceLocked();
            if (wasUp) {
                resets++;
                env.statistics().increment(Counter.CONN_RESET);
            }
            int requeued = 0;
            OutgoingMessage m;
            while ((m = sentQueue.pollLast()) != null) {
                if (m.ackPing) {
                    continue;                        // its answer could no longer be told from a late one
                }
                m.retransmit = true;
                sendQueue.addFirst(m);
                requeued++;
            }
            drainInboxLocked();                      // after DOWN: see enqueue()
            sendQueue.removeIf(q -> q.ackPing);      // not yet sent: the next connection asks afresh
            ackPings.connectionReset();
            env.statistics().add(Counter.SEND_RETRANSMITTED, requeued);
            if (shutdown) {
                return;
            }
            if (cause != null) {
                log.info("{} path {}: connection lost ({}); {} messages to resend, {} queued", connection, index,
                        cause.toString(), requeued, sendQueue.size());
            } else {
                log.debug("{} path {}: connection closed; {} messages to resend", connection, index, requeued);
            }
            if (connection.initiates() || !sendQueue.isEmpty()) {
                scheduleReconnectLocked();
            }
        }
    }

    /** Drops the current connection (protocol error, dead peer); {@link #closed} follows from the transport. */
    void drop(PathConnection pc, String reason) {
        synchronized (this) {
            if (pc != current) {
                return;
            }
            log.warn("{} path {}: dropping the connection: {}", connection, index, reason);
            state = PathState.DISCONNECTING;
        }
        pc.abort();
    }

    private void scheduleReconnectLocked() {
        if (reconnectPending || shutdown || env.isClosing()) {
            return;
        }
        long delay = backoff.nextDelayNanos();
        reconnectPending = true;
        // The token is set before the task can run (a first reconnect runs at once, on another thread) and is
        // compared under the monitor, so a cancelled reconnect is recognised even if it already started.
        Object token = new Object();
        reconnectToken = token;
        try {
            reconnectTask = env.scheduler().schedule(() -> reconnect(token), delay, TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            reconnectPending = false;                // the stack is closing
            reconnectToken = null;
        }
    }

    private void reconnect(Object token) {
        synchronized (this) {
            if (token != reconnectToken) {
                return;                              // cancelled: the path came up meanwhile
            }
            reconnectToken = null;
            reconnectTask = null;
            reconnectPending = false;
            if (state == PathState.DOWN) {
                connectLocked();
            }
        }
    }

    /** The path is up: a reconnect (or re-poke) still pending from before is moot, and would delay the next. */
    private void cancelReconnectLocked() {
        if (reconnectTask != null) {
            reconnectTask.cancel(false);
            reconnectTask = null;
        }
        reconnectToken = null;
        reconnectPending = false;
    }

    // ------------------------------------------------------------------------------------------------ maintenance

    private void startMaintenanceLocked() {
        stopMaintenanceLocked();
        long period = livenessNanos > 0 ? Math.min(MAINTENANCE_PERIOD_NANOS, livenessNanos / 4)
                : MAINTENANCE_PERIOD_NANOS;
        try {
            maintenance = env.scheduler().scheduleWithFixedDelay(this::maintain, period, period,
                    TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            maintenance = null;                      // the stack is closing
        }
    }

    private void stopMaintenanceLocked() {
        if (maintenance != null) {
            maintenance.cancel(false);
            maintenance = null;
        }
    }

    /**
     * Runs while the path is up. Asks again for an acknowledgement when sent messages have waited too long (an
     * acknowledging peer that has nothing to send, or a lost answer), and checks liveness: silent for half the
     * interval, ping; silent for all of it, drop the connection and reconnect.
     */
    private void maintain() {
        PathConnection kick = null;
        PathConnection dead = null;
        long silent;
        synchronized (this) {
            if (state != PathState.UP) {
                return;
            }
            long now = env.nanoTime();
            silent = now - lastHeardNanos;
            if (livenessNanos > 0 && silent >= livenessNanos) {
                dead = current;
                env.statistics().increment(Counter.CONN_DEAD_PEER);
            } else {
                if (livenessNanos > 0 && silent >= livenessNanos / 2
                        && now - lastLivenessPingNanos >= livenessNanos / 2) {
                    lastLivenessPingNanos = now;
                    kick = requestAckLocked(true);
                }
                if (kick == null && !sentQueue.isEmpty() && now - lastAckProgressNanos >= ACK_FALLBACK_NANOS) {
                    kick = requestAckLocked(false);
                }
            }
        }
        if (dead != null) {
            drop(dead, "nothing heard from the peer for " + TimeUnit.NANOSECONDS.toMillis(silent) + " ms");
        } else if (kick != null) {
            kick.requestTransmit();
        }
    }

    /**
     * The stack is closing: close the connection and stop reconnecting; queued messages are discarded. The close is
     * orderly (FIN), not a reset: a FIN carries TCP's acknowledgement of everything read, so a kernel peer frees
     * those messages instead of sending them again to whatever stack takes this address next.
     */
    void shutdown() {
        PathConnection pc;
        synchronized (this) {
            shutdown = true;
            stopMaintenanceLocked();
            pc = current;
            drainInboxLocked();
            sendQueue.clear();
            sentQueue.clear();
        }
        if (pc != null) {
            pc.close();
        }
    }

    @Override
    public synchronized String toString() {
        return connection + " path " + index + " " + state + " nextTx=" + Long.toUnsignedString(nextTxSeq)
                + " nextRx=" + Long.toUnsignedString(nextRxSeq) + " queued=" + sendQueue.size()
                + (inbox != null ? "+inbox" : "") + " sent="
                + sentQueue.size() + (connection.peerAcks() ? " peer-acks" : "");
    }
}
