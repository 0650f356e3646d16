package org.rds4j.core.path;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.rds4j.core.cong.CongestionMap;
import org.rds4j.core.spi.CallerPoll;
import org.rds4j.core.spi.ConnectionHandler;
import org.rds4j.core.spi.IoThread;
import org.rds4j.core.spi.TransportConnection;
import org.rds4j.core.spi.TransportInstance;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Everything one RDS host keeps about one peer host over one transport: the kernel's {@code rds_connection}. All
 * sockets of the local address share it, so N sockets talking to a peer need one transport connection, not N.
 *
 * <p>A connection has up to 8 paths (the kernel's multipath RDS/TCP, see {@link Multipath}): path 0 carries
 * everything until the peer's offer is known, then each socket sends on its own lane. The host with the smaller
 * address opens every path; the other accepts them, placing each by the path index the peer encodes in its source
 * port (SPORT_IDX, kernels from 7.0 and rds4j) or, for peers that do not, on the first free path (as 6.1 does).
 *
 * <p>One thread owns the state of every path: the transport's I/O thread for this pair of addresses
 * ({@link TransportInstance#ioThread}), on which every event of the connection's transport connections comes. Other
 * threads reach that state only through {@link #execute} (timers, an application thread's slow paths) or
 * {@link #call} (inspection, cancel, a closing socket's purge); the methods that touch it assert their thread
 * ({@link #ownerOnly}). What application threads do without asking (push onto a path's inbox, read its state, pick a
 * lane) is lock-free by design: docs/threading.md; why one owner per pair of addresses and not per path:
 * docs/decisions/0022-one-owner-per-connection.md.
 */
public final class Connection implements SendTarget {
    private static final Logger log = LoggerFactory.getLogger(Connection.class);

    private final InetAddress local;
    private final InetAddress peer;
    private final String transportName;
    private final TransportInstance transport;
    /** The one thread that touches the paths' state. */
    private final IoThread owner;
    private final ConnectionEnvironment env;
    private final CongestionMap localMap;
    private final CongestionMap peerMap;
    private final ConnectionPath[] paths;
    private final SourceAddresses sources;
    private final Multipath multipath;
    /** What this peer has queued on our sockets and unread, against RdsStackConfig.peerReceiveBytes. */
    private final PeerReceiveBudget receiveBudget;
    /** A buffer for a congestion map being received, shared by the paths. */
    final MapScratch mapScratch = new MapScratch();
    private final PathPlacement placement;
    private volatile long peerGeneration;
    private final PeerAcks peerAcks = new PeerAcks(this);
    private final PeerHealth health;
    /**
     * Transmit passes, of any path, that wrote a socket's message: what a path's waiting ack-only message takes for
     * traffic going back to the peer (Acknowledgements). Owner only.
     */
    private long dataPasses;
    /** A message from the peer reached a socket, or a socket sent to it: the peer is kept for good. */
    private volatile boolean useful;
    /** The stack forgot this idle, useless peer: nothing may use this object any more; look the peer up afresh. */
    private volatile boolean retired;
    /**
     * When a path's loss was last logged at INFO ({@code System.nanoTime()}), 0 for never: the other paths, which a
     * peer's close or crash takes down in the same moment, log theirs at DEBUG only, as does a connection that keeps
     * failing, for {@link #LOSS_LOG_INTERVAL_NANOS}. One line per connection, not per path. Owner only.
     */
    private long lossLoggedAt;
    /** How long after a loss logged at INFO the connection's further losses go to DEBUG. */
    static final long LOSS_LOG_INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(10);

    /**
     * A connection with all its paths down; nothing is sent until a socket sends to the peer.
     *
     * @param local our address, which the peer sees as the source
     * @param peer the peer host's address
     * @param transportName the transport's name, such as {@code tcp}
     * @param transport the stack's instance of that transport, which opens and accepts its connections
     * @param env the stack this connection belongs to
     * @param peerMap the peer address's congestion map, shared by every connection to that address
     */
    public Connection(InetAddress local, InetAddress peer, String transportName, TransportInstance transport,
                      ConnectionEnvironment env, CongestionMap peerMap) {
        this.local = local;
        this.peer = peer;
        this.sources = new SourceAddresses(peer);
        this.transportName = transportName;
        this.transport = transport;
        this.owner = transport.ioThread(local, peer);
        this.callerIo = transport.callerIo();
        this.streamsInCaller = callerIo && env.busyPoll();
        this.env = env;
        this.localMap = env.localMap(local);
        this.peerMap = peerMap;
        this.multipath = new Multipath(this, env.paths());
        this.receiveBudget = new PeerReceiveBudget(this, env.statistics(), env.peerReceiveBytes(),
                env.stackReceiveBudget());
        this.paths = new ConnectionPath[env.paths()];
        for (int i = 0; i < paths.length; i++) {
            paths[i] = new ConnectionPath(this, i);
        }
        this.placement = new PathPlacement(this, paths, multipath, env);
        this.health = new PeerHealth(this);
    }

    /**
     * Our end's address.
     *
     * @return the local address, as the peer sees it
     */
    public InetAddress local() {
        return local;
    }

    /**
     * The peer host's address.
     *
     * @return the peer's address
     */
    public InetAddress peer() {
        return peer;
    }

    /**
     * The name of the transport the connection runs over.
     *
     * @return the transport's name, such as {@code tcp}
     */
    public String transportName() {
        return transportName;
    }

    TransportInstance transport() {
        return transport;
    }

    /**
     * What this peer has queued on our sockets and unread.
     *
     * @return the peer's receive budget
     */
    public PeerReceiveBudget receiveBudget() {
        return receiveBudget;
    }

    ConnectionEnvironment env() {
        return env;
    }

    CongestionMap localMap() {
        return localMap;
    }

    /**
     * The peer address's congestion map, as last received.
     *
     * @return the map; senders test the destination port's bit in it before queueing
     */
    @Override
    public CongestionMap peerMap() {
        return peerMap;
    }

    /**
     * Queues a socket's message on the path it sends on: path 0 until the lanes are agreed, then the port's lane. One
     * socket's messages to one peer never overtake each other: see {@link Multipath} for the change of lanes, and
     * {@link Multipath#cameLate} for a sender that chose path 0 just before it.
     *
     * @param sourcePort the sending socket's RDS port, 0 to 65535
     * @param m the filled message
     */
    @Override
    public void enqueue(int sourcePort, OutgoingMessage m) {
        int lanes = multipath.lanes();
        paths[laneOf(sourcePort, lanes)].enqueue(m);
        queued(sourcePort, lanes);
    }

    /**
     * A socket's message joined a path's inbox, pushed ({@link #enqueue}) or appended to a run there
     * ({@link OutgoingMessage#append}), after its sender read {@code lanes}: if that was one lane and the lanes have
     * opened since, path 0 may have taken its catch-up target before the message, and takes it again.
     *
     * @param sourcePort the sending socket's RDS port
     * @param lanes the lanes the sender read before it queued the message
     */
    @Override
    public void queued(int sourcePort, int lanes) {
        if (lanes == 1 && multipath.cameLate(sourcePort)) {
            paths[0].restartCatchUp();
        }
    }

    /**
     * The lane a socket bound to {@code port} uses when {@code lanes} paths are in use: the kernel's hash of the bound
     * port. For tools and benchmarks that want sockets on chosen lanes.
     *
     * @param port the socket's RDS port, 0 to 65535
     * @param lanes the number of paths in use: 1, 2, 4 or 8
     * @return the lane, 0 to {@code lanes - 1}
     */
    public static int laneOf(int port, int lanes) {
        return lanes == 1 ? 0 : Multipath.jhash1Word(port) & (lanes - 1);
    }

    /**
     * One of the connection's paths, the kernel's {@code rds_conn_path}.
     *
     * @param index the path index, 0 to {@code pathCount() - 1}
     * @return the path
     */
    public ConnectionPath path(int index) {
        return paths[index];
    }

    /**
     * How many paths the connection has: as many as the stack offers; {@link #lanes()} of them are in use.
     *
     * @return {@link org.rds4j.RdsStackConfig#paths()}
     */
    public int pathCount() {
        return paths.length;
    }

    /**
     * How many paths are in use: the smaller of the two hosts' offers once the peer's is known, else 1.
     *
     * @return 1, 2, 4 or 8
     */
    @Override
    public int lanes() {
        return multipath.lanes();
    }

    /**
     * Whether the peer said, with SPORT_IDX in its probe or pong, that its source ports encode path indexes (kernels
     * from 7.0 and rds4j); connections it opens are then placed on the path their port names.
     *
     * @return true once the peer said so
     */
    public boolean peerEncodesPaths() {
        return multipath.peerEncodesPaths();
    }

    Multipath multipath() {
        return multipath;
    }

    /** Where the peer's connections go, and those that wait for a path. */
    PathPlacement placement() {
        return placement;
    }

    /**
     * The peer opened a transport connection to us (we have the larger address): placed on a path by
     * {@link PathPlacement#accept}, kept aside until one is free, or refused ({@code null}), and then the peer tries
     * again.
     *
     * @param tc the transport connection the peer opened
     * @return the handler for the connection, or {@code null} to refuse it
     */
    public ConnectionHandler accept(TransportConnection tc) {
        if (retired) {
            return null;                           // the stack looks the peer up again
        }
        boolean acquired = enter();
        try {
            return placement.accept(tc);
        } finally {
            exit(acquired);
        }
    }

    /**
     * The peer, the larger address, connected to us: it has messages for a path it sees down (see
     * {@link PathPlacement#peerPoked}). Called on the refused connection's I/O thread.
     */
    public void peerPoked() {
        boolean acquired = enter();
        try {
            placement.peerPoked();
        } finally {
            exit(acquired);
        }
    }

    /**
     * Whether this host is the one that opens transport connections to the peer.
     *
     * @return true if we connect, false if we wait for the peer to connect to us
     */
    public boolean initiates() {
        return Addresses.initiates(local, peer);
    }

    /**
     * The number of paths the peer offered in its last multipath probe or pong, 0 if it sent none.
     *
     * @return the peer's NPATHS
     */
    public int peerPaths() {
        return multipath.peerOffer();
    }

    /**
     * A multipath probe or its pong arrived (on any path, on its I/O thread). When the lanes open, the host
     * with the smaller address connects the extra paths, and path 0 is asked for a pass so that the catch-up starts.
     */
    void peerOffered(long npaths, boolean encodesPaths, boolean pong) {
        if (!multipath.peerOffered(npaths, encodesPaths, pong || !initiates())) {
            return;
        }
        paths[0].kick();
        if (!initiates() && encodesPaths) {
            execute(placement::dropMisplaced);
        }
        if (!initiates()) {
            execute(placement::placeAside);      // connections for the new lanes may wait
        }
        connectExtraPaths();
    }

    /**
     * Whether paths 0 to {@code index - 1} are all up: towards a peer that places connections on its first free path,
     * path {@code index} connects only then. Reads the paths' volatile states.
     */
    boolean lanesUpBelow(int index) {
        for (int i = 0; i < index; i++) {
            if (paths[i].state() != PathState.UP) {
                return false;
            }
        }
        return true;
    }

    /**
     * Path {@code index} came up (on the owner). Towards a peer that places connections on its first free path,
     * the lowest path above it that is down may connect now: it waited for this one (see
     * {@link PathConnector#connectNow}).
     */
    void pathUp(int index) {
        if (multipath.peerEncodesPaths() || !initiates()) {
            return;
        }
        int lanes = multipath.lanes();
        for (int i = index + 1; i < lanes; i++) {
            if (paths[i].state() == PathState.DOWN) {
                connectExtraPaths();
                return;
            }
        }
    }

    /**
     * On the smaller address, connects paths 1 and up that are down: as a task of its own, after the event that opened
     * the lanes (a probe or pong being read, a path coming up) is done with.
     */
    void connectExtraPaths() {
        if (initiates()) {
            int lanes = multipath.lanes();
            execute(() -> {
                for (int i = 1; i < lanes; i++) {
                    paths[i].connectIfDown();
                }
            });
        }
    }

    // ------------------------------------------------------------------------------------------------ the owner

    /**
     * Whether the calling thread owns this connection's state.
     *
     * @return true on the connection's I/O thread
     */
    public boolean inOwner() {
        return owner.inThread();
    }

    // ---- the holder: under caller I/O, ownership passes by a flag ----
    //
    // Without caller I/O the I/O thread owns the connection outright and these methods do nothing. With it
    // (TransportInstance#callerIo: TCP under busy-poll or tcp.callerIo) an application thread may read a path's
    // socket or run a pass in its own thread; it does so only holding the flag, which the I/O thread takes too, around
    // every handler call and task. A pass asked for while another thread holds the flag is run by that thread as it
    // lets go.

    /** Whether application threads may do this connection's socket I/O; fixed for the connection's life. */
    private final boolean callerIo;
    /**
     * Caller I/O under busy-poll: readers poll their paths, and a stream's senders write it
     * ({@link ConnectionPath#enqueue}).
     */
    private final boolean streamsInCaller;
    /** The thread that holds the connection's state, or null; under caller I/O only. */
    private final AtomicReference<Thread> holder = new AtomicReference<>();
    /** A pass in the caller's thread is owed: whoever holds the flag when it lets go runs it. */
    private volatile boolean passWanted;

    /** Whether application threads may read and write this connection's sockets themselves. */
    boolean callerIo() {
        return callerIo;
    }

    /** Caller I/O under busy-poll: readers poll their paths, and a stream's senders write it; fixed. */
    boolean streamsInCaller() {
        return streamsInCaller;
    }

    /**
     * Takes the flag, waiting for an application thread that holds it to let go (one poll or one pass); nothing
     * without caller I/O. Returns whether it took it, false if this thread held it already.
     */
    boolean enter() {
        if (!callerIo) {
            return false;
        }
        Thread me = Thread.currentThread();
        if (holder.get() == me) {
            return false;
        }
        for (int spins = 0; !holder.compareAndSet(null, me); spins++) {
            if (spins < ENTER_SPINS) {
                Thread.onSpinWait();
            } else {
                Thread.yield();
            }
        }
        return true;
    }

    /** Spins before an I/O thread waiting for the flag yields: an application thread holds it for one read or pass. */
    private static final int ENTER_SPINS = 100;

    /** Takes the flag if it is free; an application thread never waits for it. */
    private boolean tryEnter() {
        return holder.compareAndSet(null, Thread.currentThread());
    }

    boolean heldByMe() {
        return callerIo && holder.get() == Thread.currentThread();
    }

    /**
     * Lets the flag go if {@link #enter} or {@link #tryEnter} took it, first running the passes owed in this thread.
     * A pass asked for after the last look but before the release is seen in the look after it: whoever set
     * {@link #passWanted} then tried the flag after this thread released it, or this thread sees the request.
     */
    void exit(boolean acquired) {
        if (!acquired) {
            return;
        }
        Thread me = Thread.currentThread();
        int rounds = 0;
        while (true) {
            if (passWanted) {
                passWanted = false;
                // Passes that keep asking for more after the last round are the I/O thread's.
                runWantedPasses(rounds++ < CALLER_PASS_ROUNDS);
                continue;
            }
            holder.set(null);
            if (!passWanted || !holder.compareAndSet(null, me)) {
                return;
            }
        }
    }

    /**
     * How many rounds of passes a holder runs before it lets go: one for a reply, one more for what the first asked
     * for (an acknowledgement, the congestion map once the connection drained). A pass that keeps asking for another
     * (the rest of a bounded pass, a sink that cannot take more) would otherwise keep the flag, and the I/O thread
     * waiting for it, forever: its further passes go to the I/O thread.
     */
    private static final int CALLER_PASS_ROUNDS = 2;

    /** Each path's owed pass, in this thread or handed to the I/O thread. */
    private void runWantedPasses(boolean inThisThread) {
        for (ConnectionPath p : paths) {
            if (p.callerPassWanted) {
                p.callerPassWanted = false;
                if (inThisThread) {
                    p.transmitInCaller();
                } else {
                    p.transmitOnIoThread();
                }
            }
        }
    }

    /**
     * A pass on path {@code p} in the calling thread: now if the connection is free, else by the thread that holds it,
     * as it lets go. Caller I/O only; any thread.
     */
    void wantPass(ConnectionPath p) {
        p.callerPassWanted = true;
        passWanted = true;
        if (tryEnter()) {
            exit(true);
        }
    }

    /**
     * Reads what path {@code p}'s socket holds in the calling thread, if the connection is free (else whoever holds it
     * is working on it): a busy-polling reader's or a budget waiter's poll, or the path's maintenance turn.
     */
    void poll(ConnectionPath p, CallerPoll why) {
        boolean acquired;
        if (heldByMe()) {
            acquired = false;
        } else if (tryEnter()) {
            acquired = true;
        } else {
            return;
        }
        try {
            if (streamsInCaller) {
                writeStreams();
            }
            p.pollOwned(why);
        } finally {
            exit(acquired);
        }
    }

    /** Holding the connection: the passes a stream's senders left for a thread that may write (ConnectionPath). */
    private void writeStreams() {
        for (ConnectionPath q : paths) {
            if (q.streamUnwritten) {
                q.transmitInCaller();
            }
        }
    }

    /**
     * A budget waiter's poll of the path a message from {@code sourcePort} takes: under busy-poll it writes what the
     * connection's streams left and reads the socket, taking its reading over as a reader does; under
     * {@code tcp.callerIo} it reads only if callers read that path now (otherwise the I/O thread reads its
     * acknowledgements). Any thread, caller I/O only.
     */
    public void pollForBudget(int sourcePort) {
        if (callerIo) {
            // Under busy-poll the waiter takes the path's reading over, as a reader does: the acknowledgements then
            // come to the thread that waits for them, and no I/O thread is on a stream's way (decision 0048).
            poll(paths[laneOf(sourcePort, lanes())], streamsInCaller ? CallerPoll.READER : CallerPoll.BUDGET);
        }
    }

    private Runnable owned(Runnable task) {
        return callerIo ? () -> {
            boolean acquired = enter();
            try {
                task.run();
            } finally {
                exit(acquired);
            }
        } : task;
    }

    /**
     * For {@code assert}: true on the owning thread, else an {@link AssertionError} naming the thread that broke the
     * rule. Every method that changes a path's state starts with {@code assert connection.ownerOnly()}.
     *
     * @return true
     */
    boolean ownerOnly() {
        if (callerIo ? holder.get() != Thread.currentThread() : !owner.inThread()) {
            throw new AssertionError(this + ": path state touched on thread " + Thread.currentThread().getName()
                    + ", which does not own it (docs/threading.md)");
        }
        return true;
    }

    /**
     * Runs {@code task} on the owning thread, after what it is doing now; dropped if the transport is closed (the
     * stack is closing and the paths are shut down).
     *
     * @param task what to run
     */
    void execute(Runnable task) {
        handOver(owned(task), task);
    }

    /** Queues {@code owned} ({@code task} as {@link #owned} made it) on the owner, unless the transport is closed. */
    private void handOver(Runnable owned, Runnable task) {
        try {
            owner.execute(owned);
        } catch (RejectedExecutionException e) {
            log.debug("{}: the transport is closed; not running {}", this, task);
        }
    }

    /**
     * What a one-off timer runs: {@code task} at once if the timer's thread owns the connection (a test's single
     * thread), else handed to the owner.
     *
     * @param task what to run
     */
    void runOnOwner(Runnable task) {
        onOwner(task).run();
    }

    /**
     * {@link #runOnOwner} made ready once, for a task a timer hands over again and again (a path's maintenance, every
     * period): with caller I/O, each hand-over otherwise wraps the task in taking the connection, an object each time
     * (150 a second per stack with eight paths up, most of what its timer thread allocated).
     *
     * @param task what to run on the owning thread
     * @return what the timer runs: {@code task} at once if the timer's thread owns the connection, else handed over
     */
    Runnable onOwner(Runnable task) {
        Runnable owned = owned(task);
        return () -> {
            if (owner.inThread()) {
                owned.run();
            } else {
                handOver(owned, task);
            }
        };
    }

    /**
     * Runs {@code task} on the owning thread after {@code nanos}: the stack's timer only hands it over.
     *
     * @return the timer's handle, or {@code null} if the stack is closing
     */
    java.util.concurrent.ScheduledFuture<?> schedule(Runnable task, long nanos) {
        try {
            return env.scheduler().schedule(() -> runOnOwner(task), nanos, TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            log.debug("{}: the stack is closing; not running {}", this, task);
            return null;
        }
    }

    /** How long {@link #call} waits for the owning thread before it gives up. */
    private static final long CALL_TIMEOUT_SECONDS = 10;

    /**
     * Runs {@code query} on the owning thread and returns its result: at once on that thread, else as a task that
     * the caller waits for. For application threads and inspection, never on the message path.
     *
     * @param <T> the type of the result
     * @param query what to compute from the paths' state
     * @param ifClosed the answer when the transport is closed and the task cannot run
     * @return the result
     */
    public <T> T call(Supplier<T> query, T ifClosed) {
        if (owner.inThread()) {
            boolean acquired = enter();
            try {
                return query.get();
            } finally {
                exit(acquired);
            }
        }
        CompletableFuture<T> result = new CompletableFuture<>();
        try {
            owner.execute(() -> {
                boolean acquired = enter();
                try {
                    result.complete(query.get());
                } catch (RuntimeException | Error e) {
                    result.completeExceptionally(e);
                } finally {
                    exit(acquired);
                }
            });
        } catch (RejectedExecutionException e) {
            return ifClosed;
        }
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    return result.get(CALL_TIMEOUT_SECONDS, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    interrupted = true;                  // finish the call: its effect may already be under way
                } catch (TimeoutException e) {
                    log.warn("{}: its I/O thread did not answer within {} s; going on without it", this,
                            CALL_TIMEOUT_SECONDS);
                    return ifClosed;
                } catch (ExecutionException e) {
                    Throwable cause = e.getCause();
                    if (cause instanceof RuntimeException) {
                        throw (RuntimeException) cause;
                    }
                    throw (Error) cause;
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** A path's pass wrote a socket's message. On the owner. */
    void wroteData() {
        dataPasses++;
    }

    /** How many passes of the connection's paths wrote a socket's message. On the owner. */
    long dataPasses() {
        return dataPasses;
    }

    /** Path 0 caught up after the lanes opened: the other paths may transmit what they held. */
    void caughtUp() {
        for (int i = 1; i < paths.length; i++) {
            paths[i].kick();
        }
    }

    /**
     * The peer's generation number from its last GEN_NUM extension, 0 if none was seen.
     *
     * @return the peer's GEN_NUM, an unsigned 32-bit value
     */
    public long peerGeneration() {
        return peerGeneration;
    }

    /**
     * A multipath probe or pong arrived on path {@code on} (on its I/O thread) with the peer's GEN_NUM, 0 if it carried
     * none. A different value than a non-zero one before means the peer restarted (or a 6.1 kernel, which sends none,
     * replaced an rds4j or newer kernel host at the address): as the kernel does, every path starts its sequence
     * numbers again and discards what it sent and the old peer did not acknowledge (the new peer never asked for it).
     * Path {@code on} resets at once, before its next frame is read; the others in tasks of their own on the same
     * thread. Their connections may be the old peer's or already the new one's, so each is reset and reconnected under
     * the new numbering.
     */
    void peerGeneration(long generation, ConnectionPath on) {
        long previous = peerGeneration;
        peerGeneration = generation;
        if (previous != 0 && previous != generation) {
            peerAcks.acknowledges(false);          // learnt again from the new peer
            multipath.peerRestarted();
            on.numbering().peerRestarted(true);      // its connection is the new peer's: the probe came on it
            for (ConnectionPath p : paths) {
                if (p != on) {                       // after this frame: the others reset as tasks of their own
                    execute(() -> p.numbering().peerRestarted(false));
                }
            }
        }
    }

    /**
     * Why sends to this peer fail at the moment, or {@code null}: set while the peer answers none of rds4j's
     * acknowledgement pings (a Linux host with {@code net.rds.ping_enable=0}), so that no message to it could ever be
     * confirmed; cleared by its next pong.
     *
     * @return the reason, for an ETIMEDOUT, or {@code null} if sends may go
     */
    public String ackFailure() {
        return peerAcks.failure();
    }

    /**
     * Why sends to this peer fail at once, or {@code null}: set while the peer refuses this host (its admission
     * resets our connections, or TLS handshakes with it fail), cleared by the first bytes it sends on a connection.
     *
     * @return the failure to report ({@link org.rds4j.RdsDatagram.Failure#REFUSED} or
     *         {@link org.rds4j.RdsDatagram.Failure#AUTHENTICATION_FAILED}), or {@code null} if sends may go
     */
    public org.rds4j.RdsDatagram.Failure refusal() {
        PeerHealth.Refusal r = health.refusal();
        return r == null ? null : r.failure();
    }

    /**
     * The words for {@link #refusal()}: what the peer did and what to change.
     *
     * @return the explanation, or {@code null} if the peer does not refuse
     */
    public String refusalReason() {
        PeerHealth.Refusal r = health.refusal();
        return r == null ? null : r.reason();
    }

    /** What path 0's attempts say about the peer; the owner's. */
    PeerHealth health() {
        return health;
    }

    /**
     * Fails every message every path holds, with {@code failure} and {@code why} in each notification. On the
     * owner.
     *
     * @return how many messages of sockets were failed
     */
    int failQueued(org.rds4j.RdsDatagram.Failure failure, String why) {
        assert ownerOnly();
        int n = 0;
        for (ConnectionPath p : paths) {
            n += p.failQueued(failure, why);
        }
        return n;
    }

    /** How the peer confirms what it received, and whether it answers pings. */
    PeerAcks peerAcks() {
        return peerAcks;
    }

    /** The source address of a message from the peer's {@code port} (cached: {@link SourceAddresses}). */
    InetSocketAddress source(int port) {
        return sources.of(port);
    }

    /**
     * The connection as {@link org.rds4j.RdsStack#info()} reports it, read on the owning thread, so that its
     * figures agree with each other.
     *
     * @return the snapshot, or {@code null} if the transport is closed
     */
    public org.rds4j.RdsConnectionInfo info() {
        return call(() -> PathInfos.of(this), null);
    }

    /**
     * Queues an update of our congestion map on every path that is up. The kernel sends one copy, on any path; rds4j
     * sends one per path so that on each path the map goes ahead of the acknowledgements that would let the peer's
     * senders refill their budgets (those travel on the senders' own lanes), and so that the last map to arrive, on
     * whichever path, is the newest. The receiver notifies only for a copy that changes its view.
     */
    public void queueCongestionUpdate() {
        for (ConnectionPath p : paths) {
            p.queueCongestionUpdate();
        }
    }

    /**
     * The peer became useful: a socket sends to it, or one of its messages reached a socket. Then it is never
     * forgotten (its sequence numbers guard against duplicates when it reconnects). A volatile read when already so.
     *
     * @return false if the stack forgot this connection (it was retired before it became useful): look the peer up
     *         again
     */
    public boolean markUseful() {
        if (!useful) {
            useful = true;
        }
        return !retired;
    }

    /**
     * Whether the peer became useful.
     *
     * @return true once a socket sent to it or received from it
     */
    public boolean isUseful() {
        return useful;
    }

    /**
     * Whether the stack forgot this connection: a sender that marked it useful and then finds it retired looks the
     * peer up again.
     *
     * @return true once retired
     */
    public boolean isRetired() {
        return retired;
    }

    /**
     * Whether none of the paths is up (each is down, or connecting).
     *
     * @return true if no path is up
     */
    public boolean noPathUp() {
        for (ConnectionPath p : paths) {
            PathState s = p.state();
            if (s == PathState.UP || s == PathState.DISCONNECTING) {
                return false;
            }
        }
        return true;
    }

    /**
     * Retires this connection of a peer that never became useful and has no path up: its paths take and make no
     * connection from now on and its reconnect attempts stop. Fails, changing nothing, if the peer became useful
     * or a path came up. The retired flag is set before the useful flag is read, and a sender sets useful before it
     * reads retired, so a sender either stops this or sees it and looks the peer up again. On the owning thread.
     *
     * @return whether the connection is retired
     */
    public boolean retire() {
        assert ownerOnly();
        retired = true;
        int n = 0;
        if (!useful) {
            while (n < paths.length && paths[n].retireUnlessUp()) {
                n++;
            }
        }
        if (n == paths.length && !useful) {
            log.debug("{}: forgotten (idle, and never useful)", this);
            return true;
        }
        for (int i = 0; i < n; i++) {
            paths[i].unretire();
        }
        retired = false;
        return false;
    }

    /**
     * Drops every message of {@code owner} to {@code port} of the peer from every path, queued or sent and
     * unacknowledged (the kernel's RDS_CANCEL_SENT_TO), in one task on the owning thread.
     *
     * @param owner the socket whose messages to drop
     * @param port the peer's RDS port they were sent to
     * @return how many messages were dropped
     */
    public int cancel(MessageOwner owner, int port) {
        return call(() -> {
            int n = 0;
            for (ConnectionPath p : paths) {
                n += p.queue().cancel(owner, port);
            }
            return n;
        }, 0);
    }

    /**
     * A socket closed: its messages go from every path, queued or sent and unacknowledged, in one task on the owning
     * thread.
     *
     * @param owner the closing socket
     * @return how many messages were dropped
     */
    public int purge(MessageOwner owner) {
        return call(() -> {
            int n = 0;
            for (ConnectionPath p : paths) {
                n += p.queue().purge(owner);
            }
            return n;
        }, 0);
    }

    /** Drops every transport connection; called when the stack closes, before its transports close. */
    public void shutdown() {
        call(() -> {
            placement.shutdown();
            for (ConnectionPath p : paths) {
                p.shutdown();
            }
            return null;
        }, null);
    }

    /**
     * Whether a path that just lost its connection should say so at INFO: true unless a loss of this connection was
     * logged there within {@link #LOSS_LOG_INTERVAL_NANOS}, which covers the other paths of the same loss. On the
     * owner.
     *
     * @return whether to log this loss at INFO
     */
    boolean firstLossInAWhile() {
        assert ownerOnly();
        long now = System.nanoTime();
        if (lossLoggedAt != 0 && now - lossLoggedAt < LOSS_LOG_INTERVAL_NANOS) {
            return false;
        }
        lossLoggedAt = now == 0 ? 1 : now;
        return true;
    }

    @Override
    public String toString() {
        return "Connection[" + Addresses.host(local) + " -> " + Addresses.host(peer) + " over " + transportName
                + "]";
    }
}
