package org.rds4j.core.path;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import org.rds4j.core.stack.RdsCounters.Counter;
import org.rds4j.core.cong.CongestionMap;
import org.rds4j.core.spi.CallerPoll;
import org.rds4j.core.spi.ConnectionHandler;
import org.rds4j.core.spi.FrameSink;
import org.rds4j.core.spi.ReadTarget;
import org.rds4j.core.spi.TransportConnection;
import org.rds4j.core.wire.FrameDecoder;
import org.rds4j.core.wire.RdsHeader;
import org.rds4j.core.wire.RdsProtocolException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One transport connection of a path, from its first to its last byte: decodes what arrives and hands the path's
 * frames to the transport. A new object for every connection attempt, so events of an attempt the path has given up
 * on are recognised as stale and ignored. Its methods run on the connection's I/O thread.
 */
final class PathConnection implements ConnectionHandler, FrameDecoder.Listener, PeerReceiveBudget.Reading {
    private static final Logger log = LoggerFactory.getLogger(PathConnection.class);
    private static final VarHandle PEER_INITIATED;
    /** The room a small message's arrival starts with once a run outgrew its buffer, and the most it grows to. */
    private static final int RUN_ROOM_MIN = 256;
    private static final int RUN_ROOM_MAX = 4096;

    static {
        try {
            PEER_INITIATED = MethodHandles.lookup().findVarHandle(PathConnection.class, "peerInitiated", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final ConnectionPath path;
    /** Read once: a per-message log call costs nothing when tracing is off. */
    private final boolean trace = log.isTraceEnabled();
    private final FrameDecoder decoder;
    private volatile TransportConnection transport;
    private ByteBuffer congestionScratch;
    /** The arrival the decoder is filling, and the socket it is for. */
    private Arrival pending;
    private MessageReceiver pendingReceiver;
    /** Whether {@link #pending} is a run this read gathered, the message in progress going into a slot of it. */
    private boolean pendingInRun;
    /**
     * The room a small message's arrival is claimed with, so that the small messages behind it in the same read can
     * join it as a run: grows when a run had no room for the next one, halves after every read in which no message
     * joined a run, so that a connection whose reads carry one message per socket claims buffers of one message.
     */
    private int runRoom;
    private boolean joinedRuns;
    /**
     * The source address of the last message decoded, by its port: a read's messages mostly come from one port, and
     * the lookup through the connection reads lines other threads write (it was 8 to 12 % of a receiving I/O thread
     * in the 64-byte cells of {@code ./rds4j bench}).
     */
    private int lastSourcePort = -1;
    private InetSocketAddress lastSource;
    /** The socket last looked up, and its port: traffic usually goes to one or a few ports. */
    private MessageReceiver cachedReceiver;
    private int cachedPort = -1;
    private final DeliveryBatch batch = new DeliveryBatch();
    /** The peer's budget, which each arrival from this connection carries to its socket's queue. */
    private final PeerReceiveBudget budget;
    /** The path's numbering when this connection came up, on the owner: see {@link PathNumbering}. */
    long numbering;
    /** When the current read arrived: one clock read per read, not per message. */
    private long readNanos;
    /** The decoder's message count when a read into a reader's buffer began ({@link #readTarget}). */
    private long readInPlaceBefore;
    /** Whether this connection delivered a message to a socket (the connection then marked the peer useful). */
    private boolean deliveredAny;
    /**
     * When the message now in progress began: the read that left a message partly received with none completed
     * since; 0 between messages. Written by the I/O thread, read by the path's maintenance on the timer.
     */
    private volatile long partialSinceNanos;
    /** Whether any read arrived on this connection. */
    private boolean received;
    /** When the path came up on this connection (PathConnector#up). */
    long upNanos;
    /**
     * Messages the peer sent on this connection of its own accord (data, pings, probes; not pongs to our pings):
     * written by the I/O thread alone, read by the check that follows a poke (PathPlacement#peerPoked) on the timer.
     * A release store per message (a plain store on x86), not a volatile one: this is on every message's path.
     */
    private long peerInitiated;

    PathConnection(ConnectionPath path) {
        this.path = path;
        batch.source(path);
        this.decoder = new FrameDecoder(path.connection().env().maxPayload());
        this.budget = path.connection().receiveBudget();
    }

    /** The transport connection, or {@code null} before it is attached; for inspection. */
    TransportConnection transportConnection() {
        return transport;
    }

    void attach(TransportConnection tc) {
        this.transport = tc;
    }

    TransportConnection transport() {
        return transport;
    }

    void requestTransmit() {
        TransportConnection tc = transport;
        if (tc != null) {
            if (path.connection().heldByMe() && !path.connection().inOwner()) {
                path.connection().wantPass(path);       // an application thread's: run as it lets the connection go
                return;
            }
            tc.requestTransmit();
        }
    }

    /** Holding the connection under caller I/O: reads the socket in this thread ({@link CallerPoll}). */
    void readInCaller(CallerPoll why) {
        TransportConnection tc = transport;
        if (tc != null && tc.readInCaller(why) > 0) {
            path.connection().env().statistics().increment(Counter.CALLER_READS);
        }
    }

    /** A pass after {@code delayNanos}; false if the transport cannot delay one. On the owner. */
    boolean requestTransmitAfter(long delayNanos) {
        TransportConnection tc = transport;
        return tc != null && tc.requestTransmitAfter(delayNanos);
    }

    /** {@link TransportConnection#requestTransmitWithin}; any thread. */
    boolean requestTransmitWithin(long delayNanos) {
        TransportConnection tc = transport;
        return tc != null && tc.requestTransmitWithin(delayNanos);
    }

    /**
     * How long the message in progress has been arriving, 0 if none is.
     *
     * @param nowNanos the time now
     * @return nanoseconds since the message began
     */
    long partialNanos(long nowNanos) {
        long since = partialSinceNanos;
        return since == 0 ? 0 : nowNanos - since;
    }

    /** Stops or resumes reading this connection (see {@link PeerReceiveBudget}). */
    @Override
    public void setReadable(boolean readable) {
        if (readable && partialSinceNanos != 0) {
            partialSinceNanos = System.nanoTime();    // the time it was not read does not count against the peer
        }
        TransportConnection tc = transport;
        if (tc != null) {
            tc.setReadable(readable);
        }
    }

    void close() {
        TransportConnection tc = transport;
        if (tc != null) {
            tc.close();
        }
    }

    void abort() {
        TransportConnection tc = transport;
        if (tc != null) {
            tc.abort();
        }
    }

    @Override
    public String toString() {
        return "PathConnection[" + transport + "]";
    }

    @Override
    public void onConnected(TransportConnection connection) {
        boolean acquired = path.connection().enter();
        try {
            attach(connection);
            path.connector().connected(this, connection);
        } finally {
            path.connection().exit(acquired);
        }
    }

    @Override
    public void onConnectFailed(Throwable cause) {
        boolean acquired = path.connection().enter();
        try {
            path.connector().connectFailed(this, cause);
        } finally {
            path.connection().exit(acquired);
        }
    }

    @Override
    public void onBytes(ByteBuffer data) {
        boolean acquired = path.connection().enter();
        try {
            onBytesOwned(data);
        } finally {
            path.connection().exit(acquired);
        }
    }

    private void onBytesOwned(ByteBuffer data) {
        long before = beginRead();
        try {
            decoder.decode(data, this);
        } catch (RdsProtocolException e) {
            endWrite();
            settleRunSlot();
            batch.flush();                          // what came before the bad frame is good: deliver it
            path.receiver().countAcks();
            path.connection().env().statistics().increment(Counter.RECV_PROTOCOL_ERROR);
            data.position(data.limit());
            path.drop(this, e.getMessage());
            return;
        }
        endRead(before);
    }

    /**
     * A read may go straight into the buffer the message in progress is decoded into when it is direct: a waiting
     * reader's own (the socket's bytes then reach the reader with no copy in user space) or a large message's pooled
     * one (the copy out of the transport's read buffer is spared).
     */
    @Override
    public ReadTarget readTarget() {
        boolean acquired = path.connection().enter();
        try {
            return readTargetOwned();
        } finally {
            path.connection().exit(acquired);
        }
    }

    private ReadTarget readTargetOwned() {
        ByteBuffer t = decoder.payloadTarget();
        if (t == null || !t.isDirect() || pending == null || pendingInRun) {
            return null;
        }
        // If the reader took its buffer back, the rest goes into the arrival, which is direct too (only a message of
        // PostedBuffer.MIN bytes or more is decoded into a reader's buffer, and such arrivals are, Arrival#prepare)
        // unless the stack's off-heap bound gave it a heap buffer: then the check above refuses the next read.
        readInPlaceBefore = beginRead();
        return pending.posted != null ? pending.posted : pending;
    }

    @Override
    public void onBytesReadInPlace(int n) {
        boolean acquired = path.connection().enter();
        try {
            onBytesReadInPlaceOwned(n);
        } finally {
            path.connection().exit(acquired);
        }
    }

    private void onBytesReadInPlaceOwned(int n) {
        try {
            decoder.decodedInPlace(n, this);
        } catch (RdsProtocolException e) {
            throw new IllegalStateException(e);     // onMessage refuses nothing: it cannot happen
        }
        endRead(readInPlaceBefore);
    }

    /**
     * A read begins: if the message in progress goes into a reader's buffer, the reader may no longer take it back
     * until {@link #endWrite}, unless it did so already.
     *
     * @return the count of messages decoded before this read
     */
    private long beginRead() {
        readNanos = System.nanoTime();
        if (!received) {
            received = true;
            path.connection().health().heard();   // the peer talks to us: not refusing, not unreachable
        }
        if (pending != null && pending.posted != null && !pending.posted.beginWrite()) {
            // The reader whose buffer this message was going into stopped waiting, and took the bytes so far into
            // the arrival's own buffer: the rest goes there too, and the message is queued as any other.
            decoder.redirectPayload(pending.payload);
            pending.posted.redirected(pending);
        }
        return decoder.messages();
    }

    private void endRead(long before) {
        path.receiver().countAcks();
        endWrite();
        settleRunSlot();
        batch.flush();
        if (!joinedRuns && runRoom != 0) {
            runRoom = runRoom > RUN_ROOM_MIN ? runRoom / 2 : 0;
        }
        joinedRuns = false;
        if (!decoder.inMessage()) {
            partialSinceNanos = 0;
        } else if (partialSinceNanos == 0 || decoder.messages() != before) {
            partialSinceNanos = readNanos;           // a message completed in this read: the next one starts here
        }
        path.connection().receiveBudget().pauseIfOver(this);
        path.afterReceive(this);
    }

    /**
     * Before a read's batch is delivered: a message still incomplete in a slot of a run moves, with its bytes so far,
     * to an arrival of its own, since readers may take (and give back) the run as soon as it is delivered.
     */
    private void settleRunSlot() {
        if (!pendingInRun) {
            return;
        }
        Arrival run = pending;
        ByteBuffer slot = run.payload;
        int start = run.runEnd();
        int got = slot.position() - start;
        Arrival a = pendingReceiver.claim(slot.limit() - start, 0, false);
        a.payload.put(0, slot, start, got).position(got);
        run.runSlotDropped();
        decoder.redirectPayload(a.payload);
        pending = a;
        pendingInRun = false;
    }

    /** A read ends with a message incomplete whose payload goes into a reader's buffer: the reader may revoke it. */
    private void endWrite() {
        if (pending != null && pending.posted != null) {
            pending.posted.endWrite();
        }
    }

    /** Counts a message the peer sent of its own accord (PathReceiver#receive, on the I/O thread). */
    void peerInitiated() {
        PEER_INITIATED.setRelease(this, peerInitiated + 1);   // one writer: its own plain read is current
    }

    /** How many messages the peer has sent of its own accord on this connection; any thread. */
    long peerInitiatedCount() {
        return (long) PEER_INITIATED.getAcquire(this);
    }

    /** Whether the peer has sent anything on this connection (read on the I/O thread that delivers its close). */
    /** Whether the peer opened this connection (it made no attempt of ours). Set on the owner at accept. */
    boolean accepted;

    boolean received() {
        return received;
    }

    private MessageReceiver receiver(int port) {
        MessageReceiver r = cachedReceiver;
        if (r != null && cachedPort == port && !r.isClosed()) {
            return r;
        }
        r = path.connection().env().receiver(path.connection().local(), port);
        cachedReceiver = r;
        cachedPort = port;
        return r;
    }

    @Override
    public ByteBuffer payloadBuffer(RdsHeader h) {
        long len = h.length();
        if (h.isCongestionMap()) {
            if (len != CongestionMap.BYTES) {
                return null;                        // the kernel ignores maps of any other size
            }
            if (congestionScratch == null) {
                congestionScratch = path.connection().mapScratch.take();
            }
            return congestionScratch;
        }
        if (h.destinationPort() == 0) {
            return null;                            // nothing to keep: skip the bytes
        }
        // A duplicate (only after a reset) is decoded too and given back when receive() drops it: one check of the
        // sequence rules per message once, rather than a second look before decoding.
        MessageReceiver r = receiver(h.destinationPort());
        if (r == null) {
            return null;
        }
        pendingReceiver = r;
        if (len <= Arrival.RUN_ENTRY_MAX) {
            // A small message joins the arrival this read gathered last for the same socket, if it has room.
            Arrival last = batch.last(r);
            if (last != null) {
                ByteBuffer slot = last.runSlot((int) len);
                if (slot != null) {
                    pending = last;
                    pendingInRun = true;
                    return slot;
                }
                if (last.runOutOfRoom()) {
                    runRoom = runRoom == 0 ? RUN_ROOM_MIN : Math.min(runRoom * 2, RUN_ROOM_MAX);
                }
            }
        }
        // The socket's pooled arrival, or a waiting reader's buffer, which only a message with nothing ahead of it
        // may go into: not one behind messages of this read still gathered for the same socket.
        pending = len >= PostedBuffer.MIN ? r.claim((int) len, 0, !batch.holds(r))
                : r.claim((int) len, len <= Arrival.RUN_ENTRY_MAX ? runRoom : 0, false);
        return pending.target();
    }

    @Override
    public void onMessage(RdsHeader h, ByteBuffer payload) {
        if (trace) {
            log.trace("{} received {}", transport, h);
        }
        if (h.isCongestionMap()) {
            if (payload != null) {
                path.receiver().receiveCongestionMap(payload);
                path.connection().mapScratch.give(congestionScratch);   // one buffer per connection, not per path
                congestionScratch = null;
            }
            return;
        }
        Arrival a = pending;
        MessageReceiver r = pendingReceiver;
        boolean inRun = pendingInRun;
        pending = null;
        pendingReceiver = null;
        pendingInRun = false;
        boolean data = path.receiver().receive(h, this);
        if (!data) {
            if (inRun) {
                a.runSlotDropped();
            } else if (a != null) {
                r.abandon(a);
            }
            return;
        }
        if (a == null) {
            path.connection().env().statistics().increment(Counter.RECV_DROP_NO_SOCK);
            return;
        }
        if (inRun) {
            a.runFilled(source(h.sourcePort()));
            batch.joined((int) h.length());
            joinedRuns = true;
            return;
        }
        a.set(source(h.sourcePort()), budget, h.destinationPort(), readNanos);
        if (a.posted != null) {
            r.deliver(a, a, 1, a.length());         // in the waiting reader's buffer: to that reader alone, now
        } else {
            a.payload.flip();
            batch.add(r, a);
        }
        if (!deliveredAny) {
            deliveredAny = true;
            path.connection().markUseful();
        }
    }

    private InetSocketAddress source(int port) {
        if (port != lastSourcePort) {
            lastSource = path.connection().source(port);
            lastSourcePort = port;
        }
        return lastSource;
    }

    @Override
    public void transmit(FrameSink sink) {
        boolean acquired = path.connection().enter();
        try {
            path.transmitter().transmit(this, sink);
        } finally {
            try {
                if (path.connection().callerIo()) {
                    sink.endPass();                 // its writes reach Netty before an application thread may write
                }
            } finally {
                path.connection().exit(acquired);
            }
        }
    }

    /**
     * A pass in the application thread that holds the connection under caller I/O, into the transport's caller sink;
     * the I/O thread's if the transport cannot take one now (bytes of its own still unwritten).
     */
    void transmitInCaller() {
        TransportConnection tc = transport;
        if (tc == null) {
            return;
        }
        FrameSink sink = tc.callerSink();
        if (sink == null) {
            tc.requestTransmit();
            return;
        }
        path.connection().env().statistics().increment(Counter.CALLER_PASSES);
        try {
            path.transmitter().transmit(this, sink);
        } finally {
            sink.endPass();
        }
    }

    @Override
    public void onTransmitted(long streamOffset) {
        boolean acquired = path.connection().enter();
        try {
            path.transmitter().transmitted(this, streamOffset);
        } finally {
            path.connection().exit(acquired);
        }
    }

    @Override
    public void onClosed(Throwable cause) {
        boolean acquired = path.connection().enter();
        try {
            onClosedOwned(cause);
        } finally {
            path.connection().exit(acquired);
        }
    }

    private void onClosedOwned(Throwable cause) {
        if (pending != null) {
            if (pendingInRun) {
                pending.runSlotDropped();           // the run belongs to the read's batch, not to this message
            } else {
                pendingReceiver.abandon(pending);   // a reader's buffer it was going into is the reader's again
            }
            pending = null;
            pendingReceiver = null;
            pendingInRun = false;
        }
        path.connection().receiveBudget().forget(this);
        path.closed(this, cause);
    }
}
