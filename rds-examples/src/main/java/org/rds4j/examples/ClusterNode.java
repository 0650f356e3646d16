package org.rds4j.examples;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.rds4j.EagainException;
import org.rds4j.EbadfException;
import org.rds4j.EnobufsException;
import org.rds4j.RdsMessageInfo;
import org.rds4j.RdsSelector;
import org.rds4j.RdsSocket;
import org.rds4j.RdsSocketOptions;
import org.rds4j.RdsStack;

/**
 * One member of a small cluster service, written on the public API only ({@code org.rds4j}).
 *
 * <p>Each node owns <b>one</b> RDS socket. Through it, it sends {@code messagesPerPeer} numbered messages to every
 * other node and receives theirs, checking that each peer's messages arrive complete, exactly once and in order.
 * One thread does everything, driven by an {@link RdsSelector}:
 *
 * <ul>
 *   <li>The socket is <b>non-blocking</b>, so one slow peer never stalls the others.</li>
 *   <li>{@link EagainException}: the socket's send buffer is full (messages wait for the peers' acknowledgements).
 *       The node registers for {@link RdsSelector#OP_WRITE} and sends again once the selector says there is room.</li>
 *   <li>{@link EnobufsException}: that peer's receiver is behind and has marked its port congested. The node stops
 *       sending <em>to that peer</em> and keeps serving the others. {@link RdsSocketOptions#RDS_CONG_MONITOR} is on,
 *       so when the peer's congestion map next changes, the socket receives a
 *       {@link org.rds4j.RdsDatagram.Kind#CONGESTION_UPDATE CONGESTION_UPDATE} notification and the node tries
 *       again; it also tries again after {@link Settings#retryAfter()}, so a lost race costs a delay, not a hang.</li>
 *   <li>Readable: drain the socket with {@link RdsSocket#receive(ByteBuffer, RdsMessageInfo, int)}, which copies
 *       into one reused buffer and allocates nothing.</li>
 * </ul>
 *
 * <p>See docs/buffers-and-congestion.md for the rules this follows. A node can start with reading paused
 * ({@link Settings#startPaused()}), to play the slow receiver whose congestion the others must handle.
 */
public final class ClusterNode implements AutoCloseable {

    /**
     * What a node sends and how big its buffers are.
     *
     * @param messagesPerPeer how many messages the node sends to each peer
     * @param messageSize the payload size of each message, at least 8 bytes (the sequence number)
     * @param sendBuffer the socket's {@code SO_SNDBUF} (its send budget: payload bytes not yet acknowledged)
     * @param receiveBuffer the socket's {@code SO_RCVBUF}: above this many unread bytes its port is congested
     * @param retryAfter how long to wait for a congestion notification before trying a refused peer again
     * @param startPaused whether the node starts without reading, until {@link #resumeReading()}
     */
    public record Settings(int messagesPerPeer, int messageSize, int sendBuffer, int receiveBuffer,
                           Duration retryAfter, boolean startPaused) {
        /** Checks the values. */
        public Settings {
            if (messagesPerPeer < 0 || messageSize < Long.BYTES || sendBuffer <= 0 || receiveBuffer <= 0) {
                throw new IllegalArgumentException("bad settings: " + messagesPerPeer + " messages of "
                        + messageSize + " bytes, buffers " + sendBuffer + "/" + receiveBuffer);
            }
        }

        /**
         * The same settings, paused or not.
         *
         * @param paused whether the node starts without reading
         * @return the new settings
         */
        public Settings withStartPaused(boolean paused) {
            return new Settings(messagesPerPeer, messageSize, sendBuffer, receiveBuffer, retryAfter, paused);
        }

        /**
         * The same settings with another receive buffer.
         *
         * @param bytes the new {@code SO_RCVBUF}
         * @return the new settings
         */
        public Settings withReceiveBuffer(int bytes) {
            return new Settings(messagesPerPeer, messageSize, sendBuffer, bytes, retryAfter, startPaused);
        }
    }

    /**
     * What a node did, for its summary and for tests.
     *
     * @param sent messages accepted by {@code send()}
     * @param received messages received from peers
     * @param problems messages that were out of order, duplicated, corrupt or from an unknown sender
     * @param eagain sends refused because the send buffer was full
     * @param enobufs sends refused because the destination port was congested
     * @param congestionUpdates congestion notifications received
     * @param writableWaits times the node waited for {@link RdsSelector#OP_WRITE}
     */
    public record Stats(long sent, long received, long problems, long eagain, long enobufs, long congestionUpdates,
                        long writableWaits) {
    }

    /** What the node knows about one peer: what it still has to send there, and what it expects from it. */
    private static final class Peer {
        final InetSocketAddress address;
        long nextToSend;
        long nextExpected;
        /** {@link System#nanoTime()} before which the peer is not tried again after ENOBUFS; 0: not refused. */
        long retryAt;

        Peer(InetSocketAddress address) {
            this.address = address;
        }
    }

    /** Sends to one peer at most this many messages in a row before serving the next: fairness. */
    private static final int BURST = 32;
    /** Receives at most this many messages per readiness report, so that sending is not starved. */
    private static final int DRAIN = 256;

    private final RdsStack stack;
    private final InetSocketAddress self;
    private final Settings settings;
    private final Map<InetSocketAddress, Peer> peers = new LinkedHashMap<>();
    private final List<Peer> rotation;
    private final CompletableFuture<Void> finished = new CompletableFuture<>();
    private final CompletableFuture<InetSocketAddress> firstRefusal = new CompletableFuture<>();
    private final ByteBuffer out;
    private final ByteBuffer in;
    private final RdsMessageInfo info = new RdsMessageInfo();

    private RdsSocket socket;
    private RdsSelector selector;
    private Thread thread;
    private volatile boolean running;
    private volatile boolean reading;
    private int registeredOps = -1;
    private boolean waitingForRoom;
    private int next;

    private volatile long sent;
    private volatile long received;
    private volatile long problems;
    private volatile long eagain;
    private volatile long enobufs;
    private volatile long congestionUpdates;
    private volatile long writableWaits;

    /**
     * A node of {@code stack} that will bind {@code self} and talk to {@code peers}.
     *
     * @param stack the stack (the host) the node's socket belongs to
     * @param self the address and RDS port to bind
     * @param peers the other nodes' addresses and RDS ports
     * @param settings what to send, and the buffer sizes
     */
    public ClusterNode(RdsStack stack, InetSocketAddress self, List<InetSocketAddress> peers, Settings settings) {
        this.stack = stack;
        this.self = self;
        this.settings = settings;
        for (InetSocketAddress p : peers) {
            this.peers.put(p, new Peer(p));
        }
        this.rotation = new ArrayList<>(this.peers.values());
        this.out = ByteBuffer.allocate(settings.messageSize());
        this.in = ByteBuffer.allocate(Math.max(settings.messageSize(), 64 * 1024));
        this.reading = !settings.startPaused();
    }

    /**
     * Opens and binds the socket, then starts the node's thread.
     *
     * @throws IOException the socket could not be opened or bound
     */
    public synchronized void start() throws IOException {
        if (socket != null) {
            throw new IllegalStateException("already started");
        }
        socket = RdsSocket.open(stack);
        try {
            // Options first: buffer sizes and congestion monitoring, then bind.
            socket.setOption(RdsSocketOptions.SO_SNDBUF, settings.sendBuffer());
            socket.setOption(RdsSocketOptions.SO_RCVBUF, settings.receiveBuffer());
            socket.setOption(RdsSocketOptions.RDS_CONG_MONITOR, true);
            socket.configureBlocking(false);
            socket.bind(self);
            selector = RdsSelector.open(stack);
        } catch (IOException | RuntimeException e) {
            socket.close();
            throw e;
        }
        running = true;
        thread = new Thread(this::run, "cluster-node-" + self.getAddress().getHostAddress());
        thread.start();
    }

    /** Starts reading, if the node was started paused. Any thread may call it. */
    public void resumeReading() {
        reading = true;
        RdsSelector s = selector;
        if (s != null) {
            s.wakeup();
        }
    }

    /**
     * Completes once the node has sent everything to every peer and received everything from every peer.
     *
     * @return the future; it fails if the node's loop failed
     */
    public CompletableFuture<Void> finished() {
        return finished;
    }

    /**
     * Completes with the first peer that refused a send with {@link EnobufsException}.
     *
     * @return the future
     */
    public CompletableFuture<InetSocketAddress> firstRefusal() {
        return firstRefusal;
    }

    /**
     * Waits until the node has finished and its socket's send buffer is empty (every message acknowledged): what a
     * program does before it closes a socket whose last messages matter.
     *
     * @param timeout how long to wait in all
     * @return true if both happened in time
     * @throws IOException the node's loop failed
     * @throws InterruptedException the waiting thread was interrupted
     */
    public boolean awaitDone(Duration timeout) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        try {
            finished.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            return false;
        } catch (ExecutionException e) {
            throw new IOException("node " + self + " failed", e.getCause());
        }
        return socket.awaitSent(Duration.ofNanos(Math.max(0, deadline - System.nanoTime())));
    }

    /**
     * The node's bound address.
     *
     * @return the address and RDS port
     */
    public InetSocketAddress address() {
        return self;
    }

    /**
     * The node's stack, whose {@link RdsStack#counters() counters} tell what happened underneath.
     *
     * @return the stack
     */
    public RdsStack stack() {
        return stack;
    }

    /**
     * A snapshot of what the node did so far.
     *
     * @return the statistics
     */
    public Stats stats() {
        return new Stats(sent, received, problems, eagain, enobufs, congestionUpdates, writableWaits);
    }

    /** Stops the node's thread, waits for it to end, and closes the selector and the socket. Idempotent. */
    @Override
    public void close() {
        Thread t;
        synchronized (this) {
            running = false;
            t = thread;
        }
        if (selector != null) {
            selector.wakeup();
        }
        if (t != null) {
            boolean interrupted = false;
            while (t.isAlive()) {
                try {
                    t.join();
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
        if (selector != null) {
            selector.close();
        }
        if (socket != null) {
            socket.close();
        }
        finished.completeExceptionally(new IllegalStateException("node " + self + " closed"));
    }

    // ---- the event loop, on the node's own thread ----

    private void run() {
        try {
            while (running) {
                sendWhatWeCan();
                checkFinished();
                updateInterest();
                selector.select(selectTimeout(), (s, ops) -> {
                    if ((ops & RdsSelector.OP_READ) != 0) {
                        drain();
                    }
                    // OP_WRITE needs nothing here: the next sendWhatWeCan() finds the room.
                });
            }
        } catch (EbadfException e) {
            if (running) {
                finished.completeExceptionally(e);
            }
        } catch (IOException | RuntimeException e) {
            finished.completeExceptionally(e);
        }
    }

    /** Sends to every peer that is not congested, until done or the send buffer is full. */
    private void sendWhatWeCan() throws IOException {
        if (waitingForRoom) {
            if (!socket.isWritable()) {
                return;
            }
            waitingForRoom = false;
        }
        long now = System.nanoTime();
        int n = rotation.size();
        for (int i = 0; i < n; i++) {
            Peer p = rotation.get((next + i) % n);
            if (p.nextToSend == settings.messagesPerPeer() || (p.retryAt != 0 && now - p.retryAt < 0)) {
                continue;
            }
            p.retryAt = 0;
            for (int burst = 0; burst < BURST && p.nextToSend < settings.messagesPerPeer(); burst++) {
                fill(out, p.nextToSend);
                try {
                    socket.send(out, p.address);
                } catch (EagainException full) {
                    // The send buffer is full: every peer waits until acknowledgements free some room.
                    eagain++;
                    waitingForRoom = true;
                    writableWaits++;
                    next = (next + i) % n;
                    return;
                } catch (EnobufsException congested) {
                    // This peer's receiver is behind. Leave it alone until a congestion update (or the retry
                    // delay); the other peers are served meanwhile.
                    enobufs++;
                    p.retryAt = now + settings.retryAfter().toNanos();
                    if (p.retryAt == 0) {
                        p.retryAt = 1;
                    }
                    firstRefusal.complete(p.address);
                    break;
                }
                p.nextToSend++;
                sent++;
            }
        }
        next = (next + 1) % n;
    }

    /** Receives what is queued: messages from peers, and congestion notifications. */
    private void drain() throws IOException {
        for (int i = 0; i < DRAIN && reading && socket.isReadable(); i++) {
            int length;
            try {
                length = socket.receive(in.clear(), info, RdsSocket.MSG_DONTWAIT);
            } catch (EagainException nothing) {
                return;
            }
            switch (info.kind()) {
                case DATA -> accept(info, in.flip(), length);
                case CONGESTION_UPDATE -> {
                    // Some monitored port's map changed: try the refused peers whose port bit fired, now.
                    congestionUpdates++;
                    for (Peer p : rotation) {
                        if ((info.congestionMask() & (1L << (p.address.getPort() % 64))) != 0) {
                            p.retryAt = 0;
                        }
                    }
                }
                case SEND_FAILED -> problems++;   // only with RDS_RECVERR, which this node leaves off
                default -> problems++;
            }
        }
    }

    private void accept(RdsMessageInfo m, ByteBuffer payload, int length) {
        Peer p = peers.get(m.source());
        if (p == null || m.truncated() || length != settings.messageSize() || !check(payload, p.nextExpected)) {
            problems++;
            return;
        }
        p.nextExpected++;
        received++;
    }

    private void checkFinished() {
        if (finished.isDone()) {
            return;
        }
        for (Peer p : rotation) {
            if (p.nextToSend < settings.messagesPerPeer() || p.nextExpected < settings.messagesPerPeer()) {
                return;
            }
        }
        finished.complete(null);
    }

    private void updateInterest() throws IOException {
        int ops = (reading ? RdsSelector.OP_READ : 0) | (waitingForRoom ? RdsSelector.OP_WRITE : 0);
        if (ops != registeredOps) {
            selector.register(socket, ops);
            registeredOps = ops;
        }
    }

    /** Until the earliest retry of a refused peer; otherwise a second (select also returns on readiness). */
    private Duration selectTimeout() {
        long now = System.nanoTime();
        long wait = TimeUnit.SECONDS.toNanos(1);
        for (Peer p : rotation) {
            if (p.retryAt != 0 && p.nextToSend < settings.messagesPerPeer()) {
                wait = Math.min(wait, Math.max(TimeUnit.MILLISECONDS.toNanos(1), p.retryAt - now));
            }
        }
        return Duration.ofNanos(wait);
    }

    /** The payload: the sequence number, then bytes derived from it. */
    static void fill(ByteBuffer b, long seq) {
        b.clear();
        b.putLong(seq);
        while (b.hasRemaining()) {
            b.put((byte) (seq + b.position()));
        }
        b.flip();
    }

    static boolean check(ByteBuffer b, long expected) {
        if (b.remaining() < Long.BYTES || b.getLong() != expected) {
            return false;
        }
        while (b.hasRemaining()) {
            if (b.get() != (byte) (expected + b.position() - 1)) {
                return false;
            }
        }
        return true;
    }
}
