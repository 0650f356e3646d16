package org.rds4j.core.path;

import java.nio.ByteBuffer;
import org.rds4j.RdsPathInfo;
import org.rds4j.core.spi.CallerPoll;
import org.rds4j.core.spi.TransportConnection;
import org.rds4j.core.stack.RdsCounters.Counter;
import org.rds4j.core.util.CoalescingTask;
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
 * ask the transport for a transmit pass; they take no lock. Everything else, the queues, the sequence numbers, the
 * acknowledgement state, the connection state, belongs to the connection's I/O thread ({@link Connection#inOwner}),
 * and every method that changes it asserts so. Timers and application threads that need more than a push (a path
 * that is down, cancel, a closing socket, inspection) hand their work to that thread. The inbox is taken in only
 * there, so it has a single consumer.
 */
public final class ConnectionPath {
    private static final Logger log = LoggerFactory.getLogger(ConnectionPath.class);
    /** The source port of the kernel's multipath probe ping ({@code RDS_FLAG_PROBE_PORT}). */
    public static final int PROBE_PORT = PingHandler.PROBE_PORT;
    /**
     * The largest reply whose pass runs in the sender's thread under caller I/O: larger ones go to the I/O thread,
     * whose sink lends a large payload to the write rather than copying what the socket did not take.
     */
    static final int CALLER_PASS_MAX = 64 * 1024;
    static final ByteBuffer EMPTY = ByteBuffer.allocate(0).asReadOnlyBuffer();

    private final Connection connection;
    private final int index;
    private final ConnectionEnvironment env;
    private final PathConnector connector;
    private final PingHandler pings;
    private final PathReceiver receiver;
    private final PathMaintenance maintenance;

    /** The messages on their way; the owner's but for {@link SendQueue#push}. */
    private final SendQueue queue;
    private final PathTransmitter transmitter;

    /** Written by the owner; read by senders deciding whether the path needs connecting. */
    private volatile PathState state = PathState.DOWN;
    private volatile PathConnection current;
    private boolean shutdown;
    private boolean probeSent;
    private long resets;

    /** Acknowledgements both ways: owed by us (h_ack, ack-only), owed to us (h_ack, or pings answered). */
    private final Acknowledgements acks;
    private final AckRequests ackRequests;
    /** Which of the peer's numberings this path's received numbers belong to. */
    private final PathNumbering numbering;

    ConnectionPath(Connection connection, int index) {
        this.connection = connection;
        this.index = index;
        this.env = connection.env();

        this.acks = new Acknowledgements(env, connection.local(), this.connection + " path " + index,
                connection.streamsInCaller());
        this.receiver = new PathReceiver(this, acks);
        this.pings = receiver.pings();
        this.queue = new SendQueue(connection.peer(), env.statistics());
        this.ackRequests = new AckRequests(this, queue, acks);
        this.connector = new PathConnector(this);
        this.transmitter = new PathTransmitter(this, queue, acks, ackRequests);
        this.maintenance = new PathMaintenance(this, ackRequests);
        this.numbering = new PathNumbering(this);
        this.kickTask = new CoalescingTask(this::kickOwned);
    }

    /**
     * {@link #kickOwned}, made once: what a sender hands the owner when the path is not up. Queued at most once at a
     * time: senders of a path that is connecting queue one, not one each; the run takes the request before it looks.
     */
    private final CoalescingTask kickTask;

    /**
     * The connection this path belongs to.
     *
     * @return the connection to the peer
     */
    public Connection connection() {
        return connection;
    }

    /**
     * This path's index within its connection (the kernel's {@code cp_index}).
     *
     * @return the index, 0 while rds4j uses one path
     */
    public int index() {
        return index;
    }

    /**
     * Where the path is in its life: down, connecting, up or disconnecting.
     *
     * @return the current state, read without a lock
     */
    public PathState state() {
        return state;
    }

    /**
     * The sequence number the next message taken off the inbox will get.
     *
     * @return the next h_sequence to send, unsigned 64-bit
     */
    public long nextTxSeq() {
        return connection.call(queue::nextSeq, 0L);
    }

    /**
     * The sequence number the path expects next from the peer; older ones are dropped as duplicates.
     *
     * @return the next h_sequence expected, unsigned 64-bit
     */
    public long nextRxSeq() {
        return connection.call(receiver::nextRxSeq, 0L);
    }

    /**
     * Messages queued and not yet written, plus written and not yet acknowledged.
     *
     * @return the number of messages the path holds
     */
    public int queuedMessages() {
        return connection.call(queue::size, 0);
    }

    /**
     * How many times this path was reset.
     *
     * @return the number of resets since the path was made
     */
    public long resets() {
        return connection.call(() -> resets, 0L);
    }

    /**
     * The transport connection the path uses now, for inspection and tests.
     *
     * @return the current connection, or {@code null} while the path has none
     */
    public TransportConnection transportConnection() {
        PathConnection pc = current;
        return pc == null ? null : pc.transport();
    }

    /**
     * The path as {@link org.rds4j.RdsStack#info()} reports it, read on the owning thread (its figures agree) for as
     * long as counting its queues takes; nothing on the message path does more work for it.
     *
     * @return the snapshot, or {@code null} if the transport is closed
     */
    public RdsPathInfo info() {
        return connection.call(this::infoOwned, null);
    }

    /** {@link #info()}, on the owning thread. */
    RdsPathInfo infoOwned() {
        assert connection.ownerOnly();
        return PathInfos.of(index, state, queue, receiver.nextRxSeq(), resets, current);
    }

    // ------------------------------------------------------------------------------------------------ sending

    /**
     * Queues a message and starts transmission: at once if the path is up, after connecting if it is down. Any
     * thread, no lock. The message gets its sequence number when the path takes it off the inbox, in the order
     * messages were pushed.
     *
     * @param m the message, owned by the path from now on until it is released to its owner
     */
    public void enqueue(OutgoingMessage m) {
        queue.push(m);
        // Read after the push: if the path is still up, the connection's next pass takes the message; if it went
        // down after this read, closed() takes the inbox in after setting DOWN, so it sees the message.
        PathConnection pc = current;
        if (state == PathState.UP && pc != null) {
            if (connection.callerIo() && m.length() <= CALLER_PASS_MAX && m.owner() != null
                    && m.owner().sendsInCaller()) {
                connection.wantPass(this);                // a reply: its own pass, in this thread (decision 0031)
            } else if (connection.streamsInCaller() && m.length() <= CALLER_PASS_MAX) {
                queuedForCaller(pc, m.length());
            } else {
                pc.requestTransmit();
            }
            return;
        }
        // The message stays in the inbox, unnumbered, until the path is up: the probe of a new connection is numbered
        // and sent ahead of it (see cameUp). The owner connects the path if it is down.
        if (connection.inOwner()) {
            kickOwned();
        } else if (kickTask.request()) {
            connection.execute(kickTask);
        }
    }

    /**
     * Under busy-poll, a stream's message queued for the sending threads' passes: the one that completes a batch
     * ({@value #STREAM_BATCH} entries, or {@value #STREAM_BATCH_BYTES} bytes of frames) runs one now, in this thread;
     * the rest wait for that, for a poll of the connection by a thread that may write ({@link Connection#poll}), or
     * at the latest for the I/O thread's pass {@link #STREAM_BACKSTOP_NANOS} on.
     */
    private void queuedForCaller(PathConnection pc, int length) {
        streamUnwritten = true;
        int bytes = streamBytes + length + RdsHeader.SIZE;
        if (++streamQueued >= STREAM_BATCH || bytes >= STREAM_BATCH_BYTES) {
            streamQueued = 0;
            streamBytes = 0;
            connection.wantPass(this);
        } else {
            streamBytes = bytes;
            if (!pc.requestTransmitWithin(STREAM_BACKSTOP_NANOS)) {
                pc.requestTransmit();
            }
        }
    }

    /** On the owner: a transmit pass if the path is up, a connection if it is down and none is under way. */
    private void kickOwned() {
        PathConnection kick = kickOrConnect();
        if (kick != null) {
            kick.requestTransmit();
        }
    }

    /** Queues one of the path's own messages, numbered now. On the owner. */
    PathConnection enqueueOwn(OutgoingMessage m) {
        assert connection.ownerOnly();
        queue.add(m);
        return kickOrConnect();
    }

    /**
     * Asks for a congestion-map message ahead of the queued messages; false if the path is not up. Any thread (a
     * reader whose queue crossed its mark): it raises the transmitter's flag and asks for a pass, nothing more.
     */
    boolean queueCongestionUpdate() {
        PathConnection pc = current;
        if (state != PathState.UP || pc == null) {
            return false;          // every path that comes up sends the current map first anyway
        }
        transmitter.requestMap();
        env.statistics().increment(Counter.CONG_UPDATE_QUEUED);
        pc.requestTransmit();
        return true;
    }

    /** Path 0, from a sender: its message came late for the catch-up ({@link Multipath#cameLate}). */
    void restartCatchUp() {
        connection.execute(() -> {
            connection.multipath().restartCatchUp(queue, state == PathState.UP);
            kick();
        });
    }

    /** Asks for a transmit pass if the path is up. Any thread, no lock: other paths use it on this one. */
    void kick() {
        PathConnection pc = current;
        if (state == PathState.UP && pc != null) {
            pc.requestTransmit();
        }
    }

    /** Returns the connection to kick if up; starts connecting if down. On the owner. */
    private PathConnection kickOrConnect() {
        assert connection.ownerOnly();
        if (state == PathState.UP) {
            return current;
        }
        if (state == PathState.DOWN && !connector.pending()) {
            connector.connectNow();
        }
        return null;
    }

    // ------------------------------------------------------------------------------------------------ acknowledgements

    /** The peer has everything up to {@code seq} on this path: release those messages, oldest first. */
    void releaseUpTo(long seq) {
        assert connection.ownerOnly();
        if (queue.releaseUpTo(seq)) {
            acks.progress(env.nanoTime());
            if (index == 0 && connection.multipath().path0Progress(queue)) {
                connection.caughtUp();                // lock-free kicks of the other paths
            }
        }
    }

    /**
     * Under caller I/O, a pass in the thread that holds the connection is owed on this path: set before the
     * connection's own flag ({@link Connection#wantPass}), cleared by the holder before it runs the pass.
     */
    volatile boolean callerPassWanted;

    /**
     * Under busy-poll (caller I/O, readers polling), a stream's sends are written by the sending threads in batches of
     * at most this many queue entries (a run of small messages is one), so that with the readers reading their lanes
     * neither I/O thread is on a stream's way (decision 0048).
     */
    static final int STREAM_BATCH = 8;
    /** Or as soon as they hold this many bytes of frames: half the caller sink's buffer, so one pass writes them. */
    static final int STREAM_BATCH_BYTES = 32 * 1024;
    /** The latest the I/O thread writes what a stream's sender left queued, if no thread that may write did. */
    static final long STREAM_BACKSTOP_NANOS = 200_000;
    /**
     * Stream entries queued for the senders' passes: counted by the sending threads without synchronisation, a hint
     * that only times the batches (a lost count moves a pass by one entry).
     */
    private int streamQueued;
    /** The frame bytes of those entries' first messages (a run's later ones are not counted): the same kind of hint. */
    private int streamBytes;
    /**
     * A stream entry queued for the senders' passes may be unwritten; set by the sending threads, cleared as any pass
     * starts ({@link PathTransmitter#transmit}, the I/O thread's or a caller's), before it takes the inbox in.
     */
    volatile boolean streamUnwritten;

    /** A pass on the connection's I/O thread, as when no application thread transmits. */
    void transmitOnIoThread() {
        PathConnection pc = current;
        TransportConnection tc = pc == null ? null : pc.transport();
        if (tc != null) {
            tc.requestTransmit();
        }
    }

    /** Holding the connection's flag in an application thread: this path's pass, written in this thread. */
    void transmitInCaller() {
        PathConnection pc = current;
        if (state == PathState.UP && pc != null) {
            pc.transmitInCaller();
        }
    }

    /**
     * Reads this path's socket in the calling thread if the connection is free: a busy-polling receive's poll, for a
     * socket this path delivered to last. Any thread, caller I/O only.
     */
    public void pollAsReader() {
        connection.poll(this, CallerPoll.READER);
    }

    /**
     * A socket this path delivered to gets its messages from another path now: reading goes back to the I/O thread
     * if the connection is free (else at the path's next maintenance turn). Caller I/O only.
     */
    public void releaseReading() {
        connection.poll(this, CallerPoll.RELEASE);
    }

    /** Holding the connection: reads this path's socket in the calling thread ({@link CallerPoll}). */
    void pollOwned(CallerPoll why) {
        PathConnection pc = current;
        if (pc != null) {
            pc.readInCaller(why);
        }
    }

    /** After a batch of received bytes: send an ack-only message if the peer waits for one and nothing else goes. */
    void afterReceive(PathConnection pc) {
        assert connection.ownerOnly();
        PathConnection kick = null;
        long now = env.nanoTime();
        maintenance.heard(now);
        if (pc == current && state == PathState.UP) {
            boolean waited = acks.waiting();
            OutgoingMessage ackOnly = acks.ackOnlyIfWanted(connection.peerAcks().acknowledges(), queue.hasUnsent(), now,
                    connection.dataPasses());
            if (ackOnly == null && !waited && acks.waiting()
                    && !pc.requestTransmitAfter(acks.delayNanos())) {
                ackOnly = acks.ackOnlyNow();          // the transport cannot come back later: now, as ever
            }
            if (ackOnly != null) {
                kick = enqueueOwn(ackOnly);
            }
        }
        if (kick != null) {
            kick.requestTransmit();
        }
    }

    /**
     * Fails everything the path holds to its sockets ({@link Connection#failQueued}): the peer refuses us, or stayed
     * unreachable too long. The path's own messages go without a word, as after a peer that answers no ping.
     */
    int failQueued(org.rds4j.RdsDatagram.Failure failure, String why) {
        assert connection.ownerOnly();
        int n = queue.failAll(failure, why);
        acks.queueCleared();
        return n;
    }

    /** Peer restarts and re-placements: which numbering the peer's numbers on this path belong to. */
    PathNumbering numbering() {
        return numbering;
    }

    /** Acknowledgements both ways; the owner's. */
    Acknowledgements acks() {
        return acks;
    }

    /**
     * Drops every message of {@code owner} to {@code port} of the peer, queued or sent and unacknowledged: the
     * kernel's RDS_CANCEL_SENT_TO.
     *
     * @param owner the socket whose messages to drop
     * @param port the peer's RDS port they were sent to, 0 to 65535
     * @return how many messages were dropped
     */
    public int cancel(MessageOwner owner, int port) {
        return connection.call(() -> queue.cancel(owner, port), 0);
    }

    /**
     * A socket closed: its messages go, queued or sent and unacknowledged, as the kernel drops a closing socket's
     * messages from every path. On the larger address this can end the reason to poke the peer.
     *
     * @param owner the closing socket
     * @return how many messages were dropped
     */
    public int purge(MessageOwner owner) {
        return connection.call(() -> queue.purge(owner), 0);
    }

    // ------------------------------------------------------------------------------------------------ receiving

    /** The receive side of this path; the owner's. */
    PathReceiver receiver() {
        return receiver;
    }

    /** The path's queues; the owner's. */
    SendQueue queue() {
        return queue;
    }

    // ------------------------------------------------------------------------------------------------ connecting

    /**
     * Connects now if the path is down: see {@link PathConnector#connectIfDown}.
     */
    public void connectIfDown() {
        connector.connectIfDown();
    }

    PathConnector connector() {
        return connector;
    }

    PathTransmitter transmitter() {
        return transmitter;
    }

    /** An attempt of ours starts. On the owner. */
    void connecting(PathConnection attempt) {
        assert connection.ownerOnly();
        state = PathState.CONNECTING;
        current = attempt;
    }

    /** No connection, none in the making. On the owner. */
    void down() {
        assert connection.ownerOnly();
        current = null;
        state = PathState.DOWN;
    }

    /** The connection the path uses or is making, or {@code null}. */
    PathConnection currentConnection() {
        return current;
    }

    /** Whether messages wait to be written. On the owner. */
    boolean hasUnsent() {
        return queue.hasUnsent();
    }

    /** Whether the stack closed this path for good. On the owner. */
    boolean isShutdown() {
        return shutdown;
    }

    /** The path is up on {@code pc}. On the owner; returns the connection to kick. */
    PathConnection cameUp(PathConnection pc) {
        assert connection.ownerOnly();
        state = PathState.UP;
        numbering.up(pc);
        connector.up(pc);
        transmitter.requestMap();                    // the map goes first on every new connection
        long now = env.nanoTime();
        acks.progress(now);
        if (index == 0 && !probeSent) {
            // Path 0 probes every time it comes up, as kernels from 7.0 do: both ends settle on the number of paths
            // (again after a restart of either), and the probe carries our generation. It goes ahead of the data
            // that waited for the connection: a kernel still using the number of paths of our previous run would
            // put its answers to that data on a path we never open (6.12 did, in the suite's scenario 7b).
            probeSent = true;
            queue.dropUnwrittenProbes();             // an earlier connection's, which never left
            queue.addAheadOfInbox(pings.probe());
        }
        maintenance.start(now);
        log.debug("{} path {}: up, {}", connection, index, queue);
        connection.pathUp(index);
        return pc;
    }

    /**
     * The current connection closed: reset the path. Sent-but-unacknowledged messages go back to the front of the
     * queue, marked retransmitted, ahead of those never sent, so order is kept; sequence counters stay.
     */
    void closed(PathConnection pc, Throwable cause) {
        assert connection.ownerOnly();
        if (pc != current) {
            return;
        }
        current = null;
        boolean wasUp = state == PathState.UP || state == PathState.DISCONNECTING;
        // The peer ended a connection of ours before sending a byte (we did not drop it): how a stack that refuses
        // this host answers (PeerHealth).
        boolean refusedByPeer = index == 0 && state == PathState.UP && !pc.accepted && !pc.received();
        state = PathState.DOWN;
        maintenance.stop();
        probeSent = false;                       // path 0 probes again when it is back
        if (index == 0) {
            connection.multipath().path0Down();  // the extra paths wait for the peer to confirm again
        }
        if (wasUp) {
            resets++;
            env.statistics().increment(Counter.CONN_RESET);
        }
        int requeued = queue.requeueForResend(); // takes the inbox in, after DOWN: see enqueue()
        acks.connectionReset();
        if (shutdown) {
            return;
        }
        if (refusedByPeer) {
            log.debug("{} path {}: the peer ended the connection before sending anything ({})", connection, index,
                    cause == null ? "closed" : cause.toString());
            if (cause instanceof org.rds4j.core.spi.PeerRefusedException r) {
                connection.health().refused(r.authentication(), r.getMessage());
            } else {
                connection.health().refused(false, cause == null ? "the last: it closed the connection"
                        : "the last: " + inWords(cause));
            }
        } else if (cause != null && connection.isUseful()) {
            // A peer that closes or dies takes every path down at once: one line for the connection, in words; each
            // path's exception and counts at DEBUG.
            if (connection.firstLossInAWhile()) {
                log.info("{}: connection lost: {}; its paths reconnect and resend what the peer had not acknowledged",
                        connection, inWords(cause));
            }
            log.debug("{} path {}: connection lost ({}); {} messages to resend, {} queued", connection, index,
                    cause.toString(), requeued, queue.size() - requeued, cause);
        } else if (cause != null) {
            // A peer that never sent us a message nor got one: at INFO, a flood of connections would flood the log.
            log.debug("{} path {}: connection lost ({}) before the peer exchanged a message", connection, index,
                    cause.toString());
        } else {
            log.debug("{} path {}: connection closed; {} messages to resend", connection, index, requeued);
        }
        connector.afterClose(pc, wasUp);
    }

    /**
     * What a transport's failure means, in words a user can act on: the operating system's words for the common
     * ends of a TCP connection (the message texts Linux and the JDK use), the failure's own message otherwise. Never
     * the exception's class: transports report their own types (a Netty native error, say), which mean nothing to
     * the reader of the log.
     */
    static String inWords(Throwable cause) {
        String m = cause.getMessage();
        String text = m == null ? "" : m.toLowerCase(java.util.Locale.ROOT);
        if (text.contains("connection reset")) {
            return "the peer reset it (its process closed the connection with data unread, ended, or restarted)";
        }
        if (text.contains("broken pipe")) {
            return "the peer had closed it while we were still writing";
        }
        if (text.contains("timed out") || text.contains("timeout")) {
            return "it timed out (the peer or the network stopped answering)";
        }
        if (text.contains("no route to host") || text.contains("network is unreachable")) {
            return "the network path to the peer is gone (" + m + ")";
        }
        return m == null || m.isBlank() ? "the transport failed (" + cause.getClass().getSimpleName() + ")" : m;
    }

    /** Drops the current connection (protocol error, dead peer); {@link #closed} follows from the transport. */
    void drop(PathConnection pc, String reason) {
        assert connection.ownerOnly();
        if (pc != current) {
            return;
        }
        log.warn("{} path {}: dropping the connection: {}", connection, index, reason);
        state = PathState.DISCONNECTING;
        pc.abort();
    }

    /** The current connection is being closed; {@link #closed} follows from the transport. On the owner. */
    void disconnecting() {
        assert connection.ownerOnly();
        state = PathState.DISCONNECTING;
    }

    /**
     * The peer opened a connection for this path while it is up ({@link PathPlacement#accept}): a ping on the
     * current connection makes a dead one show itself. A peer connects a path only once its own end of the old
     * connection is gone, so the old one is usually closing already; if the peer's host restarted and our end never
     * heard, its TCP answers the ping with a reset, and the path frees for the new connection. On the owner.
     */
    void proveConnection() {
        PathConnection kick = ackRequests.request(true);
        if (kick != null) {
            kick.requestTransmit();
        }
    }

    /** The connection the path is up on, or {@code null} if it is not up. On the owner. */
    PathConnection upConnection() {
        assert connection.ownerOnly();
        return state == PathState.UP ? current : null;
    }

    /**
     * Retires the path of a peer that is being forgotten, unless it is up: it takes no connection and makes none from
     * now on (an attempt in flight finds itself stale when it completes), and drops what it queued (the protocol's
     * own messages: a peer is forgotten only if no socket sent to it).
     *
     * @return whether the path was retired; false if it is up or going down
     */
    boolean retireUnlessUp() {
        assert connection.ownerOnly();
        if (state == PathState.UP || state == PathState.DISCONNECTING) {
            return false;
        }
        shutdown = true;
        current = null;
        state = PathState.DOWN;
        connector.cancelReconnect();
        maintenance.stop();
        queue.clear();
        return true;
    }

    /** Undoes {@link #retireUnlessUp} when the connection's other paths could not be retired. On the owner. */
    void unretire() {
        assert connection.ownerOnly();
        shutdown = false;
    }

    /**
     * The stack is closing: close the connection and stop reconnecting; queued messages are discarded. The close is
     * orderly (FIN), not a reset: a FIN carries TCP's acknowledgement of everything read, so a kernel peer frees
     * those messages instead of sending them again to whatever stack takes this address next.
     */
    void shutdown() {
        assert connection.ownerOnly();
        shutdown = true;
        maintenance.stop();
        PathConnection pc = current;
        queue.clear();
        if (pc != null) {
            pc.close();
        }
    }

    /** "peer path N", for logs, on any thread. */
    String name() {
        return connection + " path " + index;
    }

    /** With the queues' figures on the owning thread; elsewhere only what any thread may read. */
    @Override
    public String toString() {
        if (!connection.inOwner()) {
            return connection + " path " + index + " " + state;
        }
        return connection + " path " + index + " " + state + " " + queue + " nextRx="
                + Long.toUnsignedString(receiver.nextRxSeq())
                + (connection.peerAcks().acknowledges() ? " peer-acks" : "");
    }
}
