package org.rds4j.transport.tcp;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelOption;
import io.netty.channel.ChannelPromise;
import io.netty.channel.EventLoop;
import io.netty.channel.socket.ChannelInputShutdownEvent;
import io.netty.handler.ssl.SslHandshakeCompletionEvent;
import io.netty.util.ReferenceCountUtil;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;
import javax.net.ssl.SSLException;
import org.rds4j.core.spi.CallerPoll;
import org.rds4j.core.spi.ConnectionHandler;
import org.rds4j.core.spi.FrameSink;
import org.rds4j.core.spi.PeerRefusedException;
import org.rds4j.core.spi.ReadTarget;
import org.rds4j.core.spi.TransportConnection;
import org.rds4j.core.util.CoalescingTask;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One TCP connection of an RDS path, both the core's handle on it ({@link TransportConnection}) and the last handler
 * of its Netty pipeline.
 *
 * <p><b>Threading.</b> Every {@link ConnectionHandler} call for this connection runs on its channel's event loop,
 * one at a time and never nested in another: Netty delivers reads, writability and close events there, and the
 * core's {@link #requestTransmit()} only queues a task there. So the order the core sees is the order things
 * happened on the socket. Under busy-poll (caller I/O) an application thread that holds the core's connection may
 * also read and write the socket and call the handler, in its own thread: see the section on caller I/O below and
 * docs/threading.md.
 *
 * <p><b>TLS.</b> On a connection with TLS (an {@link io.netty.handler.ssl.SslHandler} ahead of this handler) all of the
 * life cycle below waits for the handshake: "active" means the handshake succeeded, and the core sees no connection
 * that did not authenticate. An outgoing one whose handshake fails, or that the peer ends before the handshake does,
 * is reported as a failed connect with a {@link PeerRefusedException} (a timeout with a plain {@link IOException});
 * an incoming one is closed, logged by {@link TlsRefusals}. Either way {@code conn_tls_handshake_failed} counts a
 * failed handshake.
 *
 * <p><b>Life cycle.</b> Outgoing: {@code onConnected} from {@code channelActive}, before the first read. Incoming:
 * the channel starts with auto-read off, {@code channelActive} asks {@link org.rds4j.core.spi.TransportHost#accept};
 * {@code null} resets the connection (SO_LINGER 0, close: RST, as the kernel does), a handler turns reading on.
 * From then on it reads unless the core stops it ({@link #setReadable}: a peer over its bound of unread messages),
 * which turns Netty's auto-read off, so the socket's receive buffer fills and TCP's window closes on the peer. {@code
 * onClosed} comes exactly once, from {@code channelInactive}, with the first error seen (an exception, a failed
 * write) or {@code null} for an orderly close.
 *
 * <p><b>Failure.</b> A connection that fails on an I/O error (a write the peer's reset refused, a failed read) is
 * read to its end before it closes ({@link #drainThenClose}): what the peer sent before it reset the connection may
 * still wait unread in our socket's receive buffer, TCP has acknowledged it, and a kernel peer frees a message once
 * TCP acknowledged all of it ({@code rds_tcp_write_space}), so it never sends it again. Closing at the failed write,
 * as Netty does by itself, lost those messages (seen against Linux 6.1 with a connection reset mid-run). Channels
 * therefore run with Netty's {@code AUTO_CLOSE} off: a failed write shuts the output down and reports here, and the
 * read that reaches the end of the stream, or its error, closes the channel.
 *
 * <p><b>Transmit.</b> {@link #requestTransmit()} is one volatile read in the common case (a call already pending),
 * else one CAS and one task submission of a preallocated {@link Runnable}: the core may call it after every message.
 * {@link #requestTransmitAfter} leaves the request with the event loop's {@link DeferredTransmits} until its
 * deadline.
 */
final class TcpConnection extends ChannelDuplexHandler
        implements TransportConnection, BatchingFrameSink.Outcome {
    private static final Logger log = LoggerFactory.getLogger(TcpConnection.class);
    static final String HANDLER_NAME = "rds4j-tcp";

    private final TcpTransportInstance instance;
    private final Channel channel;
    private final boolean outgoing;
    /** Whether an SslHandler precedes this handler: then the handshake's success stands for channelActive. */
    private final boolean tls;
    private final BatchingFrameSink sink;
    /** The transmit pass, queued on the event loop at most once at a time. */
    private final CoalescingTask transmitTask = new CoalescingTask(this::runTransmit);
    private final Runnable applyReadableTask = this::applyReadable;
    /** What the core last asked for: {@link #applyReadable} brings the channel to it on the event loop. */
    private volatile boolean readable = true;
    private volatile boolean localClose;

    // Event-loop state.
    private ConnectionHandler handler;
    private boolean live;           // the handler owns this connection: onConnected called / accept returned it
    private boolean closedNotified;
    private boolean connectFailedNotified;
    /** An outgoing handshake ended with a TLS error (not the peer closing first). */
    private boolean handshakeFailed;
    /** Whether the peer sent a byte on this connection. */
    private boolean readAny;
    private Throwable cause;
    /** Failed on an I/O error: reading to the end before the close ({@link #drainThenClose}). Event-loop state. */
    private boolean draining;
    private InetSocketAddress local;
    private InetSocketAddress remote;
    /** Between a read target given by the core and the report of what the read put there. */
    private boolean inPlaceReading;
    /** A pass at a deadline waits in the event loop's {@link DeferredTransmits}. */
    private boolean deferredTransmit;
    private final Runnable deferredTransmitTask = this::deferredTransmitDue;

    /**
     * @param handler the handler of an outgoing connection, {@code null} for an accepted one
     * @param tls whether the pipeline has an SslHandler ahead of this handler
     */
    TcpConnection(TcpTransportInstance instance, Channel channel, ConnectionHandler handler, boolean tls) {
        this.instance = instance;
        this.channel = channel;
        this.handler = handler;
        this.outgoing = handler != null;
        this.tls = tls;
        this.sink = new BatchingFrameSink(channel, this, !tls);
        this.callerSocket = tls || !instance.callerIo() ? null : CallerSocket.of(channel);
        if (callerSocket != null && !(channel instanceof CallerIoSocketChannel)) {
            // Netty's epoll channel closes itself at the end of the stream, and on a failed read, unless half-closure
            // is allowed; then it tells this handler first (userEventTriggered), which shuts the callers' gate and
            // closes. Every other close passes through close(ctx, promise).
            channel.config().setOption(ChannelOption.ALLOW_HALF_CLOSURE, true);
        }
        this.leaseNanos = instance.readerLeaseNanos();
        channel.closeFuture().addListener(f -> {
            if (live && !closedNotified) {
                instance.closing(this, true);       // closed, and the core not told yet: see acceptLater
            }
        });
    }

    // ---- TransportConnection: any thread ----

    @Override
    public InetSocketAddress localAddress() {
        InetSocketAddress a = local;
        return a != null ? a : (InetSocketAddress) channel.localAddress();
    }

    @Override
    public InetSocketAddress remoteAddress() {
        InetSocketAddress a = remote;
        return a != null ? a : (InetSocketAddress) channel.remoteAddress();
    }

    @Override
    public void requestTransmit() {
        if (transmitTask.request()) {
            try {
                channel.eventLoop().execute(transmitTask);
            } catch (RejectedExecutionException e) {     // the instance is shutting down; onClosed follows
                transmitTask.withdraw();
            }
        }
    }

    /**
     * On the event loop, only if its select strategy keeps deadlines ({@link DeferredTransmits}: a loop that yields
     * before it sleeps); in an application thread reading under caller I/O, kept for that thread's later polls and
     * the path's maintenance turn; otherwise false, and the core acts at once.
     */
    @Override
    public boolean requestTransmitAfter(long delayNanos) {
        if (!channel.eventLoop().inEventLoop()) {
            if (callerReading) {                    // a caller's read: a later poll, or the maintenance turn, sends it
                long due = System.nanoTime() + delayNanos;
                callerDeadline = due == 0 ? 1 : due;
                return true;
            }
            return false;
        }
        DeferredTransmits d = DeferredTransmits.ofThisThread();
        if (d == null) {
            return false;
        }
        if (!deferredTransmit) {
            deferredTransmit = true;
            d.add(deferredTransmitTask, System.nanoTime() + delayNanos);
        }
        return true;
    }

    /**
     * A deadline of {@link #requestTransmitWithin} is set on the event loop, or on its way there: raised by the first
     * request, lowered when the deadline's pass is queued, so that a stream's senders hand the loop one task per
     * deadline, not one per message.
     */
    private final AtomicBoolean backstopArmed = new AtomicBoolean();
    private volatile long backstopNanos;
    private final Runnable armBackstop = this::armBackstop;
    private final Runnable backstopDue = this::backstopDue;

    /** Any thread: the event loop keeps the deadline with its others ({@link DeferredTransmits}). */
    @Override
    public boolean requestTransmitWithin(long delayNanos) {
        if (backstopArmed.get() || !backstopArmed.compareAndSet(false, true)) {
            return true;                            // a deadline is set or on its way: its pass takes this too
        }
        backstopNanos = delayNanos;
        onLoop(armBackstop);
        return true;
    }

    /**
     * On the event loop: the backstop's deadline, a task of its own among the loop's deadlines (not riding on an
     * acknowledgement's, which may be later), or a pass now if the loop keeps no deadlines.
     */
    private void armBackstop() {
        DeferredTransmits d = DeferredTransmits.ofThisThread();
        if (d == null) {
            backstopArmed.set(false);
            requestTransmit();
            return;
        }
        d.add(backstopDue, System.nanoTime() + backstopNanos);
    }

    /** The backstop's deadline came. On the event loop. */
    private void backstopDue() {
        backstopArmed.set(false);                   // before the pass: what is queued after this arms anew
        requestTransmit();
    }

    /** The deadline of {@link #requestTransmitAfter} came. On the event loop. */
    private void deferredTransmitDue() {
        deferredTransmit = false;
        requestTransmit();
    }

    // ---- caller I/O (busy-poll, decision 0031): an application thread that holds the core's connection ----
    //
    // Such a thread may read the socket (readInCaller) and write it (callerSink) in its own context. Reading is
    // either the event loop's (auto-read) or the callers', never both: a reader's first poll asks the loop to stop
    // reading, and callers read only once it has (callerReadReady), so no byte is read out of order. The loop takes
    // reading back when asked (a maintenance turn with no reader since the last, a reader gone to another path), at
    // the end of the stream or an error, which it then reads and reports as usual, and under tcp.callerIo once no
    // reader polled for the reading lease (readers there poll only while they wait for a reply). Caller writes happen
    // only while Netty holds nothing unwritten for the channel; a short write hands the rest to the loop (callerLeft).
    // Every system call a caller makes on the socket (CallerSocket: the epoll descriptor, or the JDK channel without
    // epoll) is inside the gate (enterCallerIo), which the loop shuts before the channel closes (decision 0039).

    /** The socket application threads read and write, or null: not caller I/O, or TLS. */
    private final CallerSocket callerSocket;
    /** Callers may use the channel: the handler is live and the channel not closed. Set on the event loop. */
    private volatile boolean callerOk;
    /** Callers inside a system call on the socket, between {@link #enterCallerIo} and {@link #exitCallerIo}. */
    private final AtomicInteger callersInIo = new AtomicInteger();
    /** How long {@link #shutCallerIo} waits for a caller's system call to end before it gives up and warns. */
    private static final long GATE_WAIT_NANOS = TimeUnit.SECONDS.toNanos(10);
    /** Reading is the callers', or being handed to them: set by a caller, cleared on the event loop. */
    private volatile boolean callerReading;
    /** The event loop stopped reading after handing the core all it read: callers may read. */
    private volatile boolean callerReadReady;
    /** A reader polled since the last maintenance turn. */
    private volatile boolean readerPolled;
    /** A pass the core asked for at a deadline ({@link System#nanoTime}) while callers read; 0 if none. */
    private volatile long callerDeadline;
    /** Held for one caller read and its decoding, and by the event loop while it hands reading over or back. */
    private final ReentrantLock callerReadLock = new ReentrantLock();
    /** The callers' read buffer and packing buffer, from the stack's pool; the holder's, released on close. */
    private ByteBuf callerInBuf;
    private ByteBuffer callerIn;
    private ByteBuf callerOutBuf;
    private CallerFrameSink callerFrames;
    private final Runnable handReadingOver = this::handReadingOver;
    private final Runnable takeReadingBack = this::takeReadingBack;
    /** How long reading stays the callers' after the last reader's poll (tcp.callerIo); 0: no lease. */
    private final long leaseNanos;
    /** When a reader last polled ({@link System#nanoTime}), while there is a lease. */
    private volatile long readerPolledAt;
    /** A check of the lease waits on the event loop. Event-loop state. */
    private boolean leaseWatched;
    private final Runnable leaseDue = this::leaseDue;
    private final Runnable checkLease = this::checkLease;

    /** The event loop holds {@link #callerReadLock} for reads of its own while callers own reading. Loop state. */
    private boolean loopReadHolds;

    /** Reads a caller makes in one poll at most, of 64 KiB each. */
    private static final int READS_PER_POLL = 4;

    @Override
    public int readInCaller(CallerPoll why) {
        if (!callerOk) {
            return 0;
        }
        long due = callerDeadline;
        if (due != 0 && System.nanoTime() - due >= 0) {
            callerDeadline = 0;
            transmitDue();
        }
        switch (why) {
            case RELEASE -> {
                if (callerReading) {
                    onLoop(takeReadingBack);
                }
                return 0;
            }
            case MAINTENANCE -> {
                if (!callerReading) {
                    return 0;
                }
                if (!readerPolled) {
                    onLoop(takeReadingBack);        // nobody polls: the loop reads again
                    return 0;
                }
                readerPolled = false;
            }
            case BUDGET -> {
                if (!callerReading) {
                    return 0;                       // the loop reads the acknowledgements
                }
            }
            case READER -> {
                readerPolled = true;
                if (leaseNanos != 0) {
                    readerPolledAt = System.nanoTime();
                }
                if (!callerReading) {
                    callerReading = true;
                    onLoop(handReadingOver);
                }
            }
            default -> throw new IllegalArgumentException(why.toString());
        }
        return callerReadReady && readable ? readNow() : 0;
    }

    private void onLoop(Runnable task) {
        if (channel.eventLoop().inEventLoop()) {
            task.run();
        } else {
            try {
                channel.eventLoop().execute(task);
            } catch (RejectedExecutionException e) {
                log.debug("{}: the event loop has shut down", this);
            }
        }
    }

    /** A pass the core asked for at a deadline came due during a poll: in this thread if it can write now. */
    private void transmitDue() {
        FrameSink s = channel.eventLoop().inEventLoop() ? null : callerSink();
        if (s != null) {
            handler.transmit(s);
        } else {
            requestTransmit();
        }
    }

    private int readNow() {
        if (!callerReadLock.tryLock()) {
            return 0;                               // the loop is handing reading over or back
        }
        int total = 0;
        try {
            if (!callerReadReady || !callerOk) {
                return 0;
            }
            ByteBuffer in = callerIn;
            if (in == null) {
                callerInBuf = channel.alloc().directBuffer(CallerFrameSink.SIZE, CallerFrameSink.SIZE);
                in = callerIn = callerInBuf.nioBuffer(0, CallerFrameSink.SIZE);
            }
            for (int i = 0; i < READS_PER_POLL; i++) {
                in.clear();
                int n;
                if (!enterCallerIo()) {
                    return total;                   // the channel is closing
                }
                try {
                    n = callerSocket.read(in);
                } catch (IOException e) {
                    onLoop(takeReadingBack);        // the loop meets the error itself and reports it
                    return total;
                } finally {
                    exitCallerIo();
                }
                if (n < 0) {
                    onLoop(takeReadingBack);        // the end of the stream: the loop reads it and closes
                    return total;
                }
                if (n == 0) {
                    return total;
                }
                total += n;
                in.flip();
                handler.onBytes(in);
                if (n < in.capacity()) {
                    return total;
                }
            }
            return total;
        } finally {
            callerReadLock.unlock();
        }
    }

    /**
     * A caller is about to make a system call on the socket, and may, until {@link #exitCallerIo}: false if the
     * channel is closing. The count goes up before the flag is read, and {@link #shutCallerIo} lowers the flag before
     * it reads the count (all volatile), so either the caller sees the flag down or the closer sees the caller.
     */
    boolean enterCallerIo() {
        callersInIo.getAndIncrement();
        if (callerOk) {
            return true;
        }
        callersInIo.getAndDecrement();
        return false;
    }

    /** The caller's system call is over. */
    void exitCallerIo() {
        callersInIo.getAndDecrement();
    }

    /**
     * No caller makes a system call on the socket after this returns: called on the event loop before anything
     * closes the channel, and by the instance's close on the thread closing the stack (never a caller's), since the
     * number of an epoll channel's closed descriptor may be another socket's a moment later. A caller's call does not
     * block (the socket is non-blocking), so the wait is that of one system call, or of a caller that lost its core
     * inside one.
     */
    void shutCallerIo() {
        callerOk = false;
        if (callersInIo.get() == 0) {
            return;
        }
        long start = System.nanoTime();
        for (int spins = 0; callersInIo.get() != 0; spins++) {
            if (spins < 100) {
                Thread.onSpinWait();
            } else if (System.nanoTime() - start < GATE_WAIT_NANOS) {
                Thread.yield();
            } else {
                log.warn("{}: an application thread stayed inside a system call on the socket for {} s; closing"
                        + " anyway", this, TimeUnit.NANOSECONDS.toSeconds(GATE_WAIT_NANOS));
                return;
            }
        }
    }

    /**
     * On the event loop, before each read of its own: if callers own reading, the read and the delivery of what it
     * got happen under {@link #callerReadLock}, as a caller's do, until {@link #loopReadEnded}. Netty's epoll channel
     * reads at the peer's end of the stream ({@code EPOLLRDHUP}) or an error ({@code EPOLLERR}) whether or not it is
     * asked to, which may be while a caller reads; so the socket's bytes reach the core in the order they were read.
     * No deadlock: a caller only tries the lock, and gives its poll up (and the core's connection with it), which the
     * loop's delivery may be waiting for.
     */
    void loopReadBegins() {
        if (callerReadReady && !loopReadHolds) {
            callerReadLock.lock();
            loopReadHolds = true;
        }
    }

    /** On the event loop, after its reads and their deliveries: callers may read again. */
    void loopReadEnded() {
        if (loopReadHolds) {
            loopReadHolds = false;
            callerReadLock.unlock();
        }
    }

    /** Every close of the channel through its pipeline, from any thread, comes here on the event loop first. */
    @Override
    public void close(ChannelHandlerContext ctx, ChannelPromise promise) throws Exception {
        shutCallerIo();
        ctx.close(promise);
    }

    /** On the event loop: it stops reading, then callers may. */
    private void handReadingOver() {
        callerReadLock.lock();
        try {
            if (callerReading && callerOk && channel.isActive()) {
                channel.config().setAutoRead(false);
                callerReadReady = true;
                if (leaseNanos != 0) {
                    watchLease(System.nanoTime() + leaseNanos);
                }
            }
        } finally {
            callerReadLock.unlock();
        }
    }

    /**
     * On the event loop: the lease is checked at {@code due} ({@link System#nanoTime}). Through the loop's
     * deadlines ({@link DeferredTransmits}: no allocation, and the loop stays awake meanwhile), or a scheduled task
     * on a loop that sleeps at once ({@code tcp.yieldMicros=0}).
     */
    private void watchLease(long due) {
        if (leaseWatched) {
            return;
        }
        leaseWatched = true;
        DeferredTransmits d = DeferredTransmits.ofThisThread();
        if (d != null) {
            d.add(leaseDue, due);
        } else {
            channel.eventLoop().schedule(checkLease, Math.max(0, due - System.nanoTime()), TimeUnit.NANOSECONDS);
        }
    }

    /** The lease's deadline came, inside the loop's run of its deadlines, which may not add one: checked next. */
    private void leaseDue() {
        onLoopLater(checkLease);
    }

    /** On the event loop: reading comes back to it if no reader polled for the lease, else the lease is watched on. */
    private void checkLease() {
        leaseWatched = false;
        if (!callerReading || !callerReadReady) {
            return;                                 // the loop reads, or hands reading over again (and watches then)
        }
        long last = readerPolledAt;
        if (System.nanoTime() - last >= leaseNanos) {
            takeReadingBack();
        } else {
            watchLease(last + leaseNanos);
        }
    }

    private void onLoopLater(Runnable task) {
        try {
            channel.eventLoop().execute(task);
        } catch (RejectedExecutionException e) {
            log.debug("{}: the event loop has shut down", this);
        }
    }

    /** On the event loop: callers stop reading, then it reads again as the core last asked. */
    private void takeReadingBack() {
        callerReadLock.lock();
        try {
            callerReadReady = false;
            callerReading = false;
            if (live && channel.isActive() && !draining) {
                channel.config().setAutoRead(readable);  // true also starts a read
            }
        } finally {
            callerReadLock.unlock();
        }
    }

    @Override
    public FrameSink callerSink() {
        // The stash first, then Netty's count: bytes the loop takes from the stash are counted before it is cleared.
        if (!callerOk || sink.holdsCallerBytes() || !sink.isDrained()) {
            return null;
        }
        CallerFrameSink f = callerFrames;
        if (f == null) {
            callerOutBuf = channel.alloc().directBuffer(CallerFrameSink.SIZE, CallerFrameSink.SIZE);
            f = callerFrames = new CallerFrameSink(this, callerSocket,
                    callerOutBuf.nioBuffer(0, CallerFrameSink.SIZE));
        }
        return f.begin(sink.streamOffset());
    }

    /** From the caller sink, holding the connection: its pass is written up to {@code endOffset}. */
    void callerWritten(long endOffset) {
        sink.callerWrote(endOffset);
        handler.onTransmitted(endOffset);
    }

    /** From the caller sink, holding the connection: the socket did not take these bytes; the loop writes them. */
    void callerLeft(ByteBuffer rest, long endOffset) {
        sink.callerLeft(rest, endOffset);
        requestTransmit();
    }

    /** From the caller sink: a write failed; the loop closes the connection. */
    void callerFailed(IOException e) {
        onLoop(() -> fail(e));
    }

    /**
     * On the event loop, after the core heard of the close (so no caller holds the connection): the buffers go back.
     */
    private void releaseCallerBuffers() {
        callerReadLock.lock();
        try {
            callerIn = null;
            callerFrames = null;
            if (callerInBuf != null) {
                callerInBuf.release();
                callerInBuf = null;
            }
            if (callerOutBuf != null) {
                callerOutBuf.release();
                callerOutBuf = null;
            }
        } finally {
            callerReadLock.unlock();
        }
    }

    @Override
    public void close() {
        localClose = true;
        channel.close();
    }

    @Override
    public void abort() {
        localClose = true;
        EventLoop loop = channel.eventLoop();
        if (loop.inEventLoop()) {
            reset();
        } else {
            try {
                loop.execute(this::reset);
            } catch (RejectedExecutionException e) {
                channel.close();
            }
        }
    }

    /** SO_LINGER 0 then close: the kernel discards unsent bytes and sends RST. On the event loop. */
    private void reset() {
        if (channel.isOpen()) {
            try {
                channel.config().setOption(ChannelOption.SO_LINGER, 0);
            } catch (RuntimeException e) {
                log.debug("{}: cannot set SO_LINGER 0 before reset: {}", this, e.toString());
            }
            channel.close();
        }
    }

    @Override
    public void setReadable(boolean r) {
        readable = r;
        if (channel.eventLoop().inEventLoop()) {
            applyReadable();
            return;
        }
        try {
            channel.eventLoop().execute(applyReadableTask);
        } catch (java.util.concurrent.RejectedExecutionException e) {
            log.debug("{}: the event loop has shut down; reading stays as it is", this);
        }
    }

    /** On the event loop: auto-read as last asked; an accepted channel reads only once its handler is live. */
    private void applyReadable() {
        if (callerReading || draining) {
            return;                                 // callers read, and look at the flag themselves; or read to the end
        }
        if (live && channel.isActive() && channel.config().isAutoRead() != readable) {
            channel.config().setAutoRead(readable);  // true also starts a read
        }
    }

    // ---- transmit: event loop ----

    /** The request was taken before this runs ({@link CoalescingTask#run}): one made during it queues another. */
    private void runTransmit() {
        if (!live || closedNotified || cause != null || !channel.isActive()) {
            return;
        }
        try {
            handler.transmit(sink);
        } catch (Throwable t) {
            log.warn("{}: transmit failed; closing the connection", this, t);
            fail(t);
        } finally {
            sink.finish();
        }
    }

    @Override
    public void batchTransmitted(long endOffset) {
        if (live && !closedNotified) {
            handler.onTransmitted(endOffset);
        }
    }

    @Override
    public void batchFailed(Throwable failure) {
        // A ClosedChannelException without a cause only says the channel closed first; the close's own reason, if
        // any, was recorded by exceptionCaught or wraps it.
        Throwable t = failure instanceof ClosedChannelException ? failure.getCause() : failure;
        if (localClose || t == null) {
            channel.close();
        } else {
            fail(t);
        }
    }

    private void fail(Throwable t) {
        callerOk = false;
        if (cause == null) {
            cause = t;
        }
        if (live && !closedNotified) {
            instance.closing(this, true);
        }
        // TLS's errors are IOExceptions too, but what follows a broken record cannot be read.
        if (t instanceof IOException && !(t instanceof SSLException) && live && !closedNotified && !localClose
                && channel.isActive()) {
            if (!draining) {
                drainThenClose();
            }
            return;                                 // reading to the end closes it
        }
        channel.close();
    }

    /** How long a failed connection may take to read what it holds before it is closed anyway. */
    private static final long DRAIN_LIMIT_MS = 2_000;

    /**
     * On the event loop, after an I/O error: reads what the socket still holds, then closes (see Failure, above).
     * Nothing is written any more (a transmit pass sees the cause). Reading goes on whatever the core asked, and
     * back from callers: what is left is at most the socket's receive buffer, and the peer will not send it again.
     * The read that finds the end of the stream, or the reset behind it, closes the channel; a socket that failed
     * and still does not end (a local error, not the peer's) is closed after {@link #DRAIN_LIMIT_MS}.
     */
    private void drainThenClose() {
        draining = true;
        callerReadLock.lock();
        try {
            callerReadReady = false;
            callerReading = false;
        } finally {
            callerReadLock.unlock();
        }
        channel.config().setAutoRead(true);
        channel.read();
        channel.eventLoop().schedule(() -> {
            channel.close();                        // no-op once the read closed it
        }, DRAIN_LIMIT_MS, TimeUnit.MILLISECONDS);
    }

    /** Whether bytes read now go to the core: the connection is its, and has not failed, or is read to its end. */
    private boolean delivering() {
        return live && !closedNotified && (cause == null || draining);
    }

    // ---- pipeline events: event loop ----

    @Override
    public void channelActive(ChannelHandlerContext ctx) throws Exception {
        local = (InetSocketAddress) channel.localAddress();
        remote = (InetSocketAddress) channel.remoteAddress();
        if (!tls) {
            established();
        } else if (!outgoing) {
            if (!instance.host().admits(remote.getAddress())) {
                localClose = true;                  // not on the allow-list: no handshake for it
                reset();
            } else {
                // Accepted channels start with auto-read off; the handshake needs the peer's hello read. SslHandler
                // asks for further reads itself until the handshake is done; the core's decision turns reading on.
                channel.read();
            }
        }
        ctx.fireChannelActive();
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
        if (evt instanceof ChannelInputShutdownEvent) {
            // The end of the stream, or a failed read, on a channel that allows half-closure (an epoll channel under
            // caller I/O): it is read to its end, so it closes, as Netty's own close does for the others. The close
            // passes this handler's close, which shuts the callers' gate, before any close of Netty's own.
            channel.close();
        }
        if (tls && evt instanceof SslHandshakeCompletionEvent done) {
            if (done.isSuccess()) {
                log.debug("{}: TLS handshake done", this);
                established();
            } else {
                if (!localClose) {                  // not a handshake we cut short ourselves
                    instance.host().tlsHandshakeFailed();
                    if (!outgoing) {
                        instance.tlsRefusals().handshakeFailed(remoteAddress(), done.cause());
                    } else if (handshakeError(done.cause()) != null) {
                        handshakeFailed = true;
                    }
                }
                fail(done.cause());
            }
        }
        ctx.fireUserEventTriggered(evt);
    }

    /** How long an accepted connection waits for the close of an earlier one from its peer to be reported. */
    private static final long ACCEPT_WAIT_NANOS = TimeUnit.SECONDS.toNanos(2);
    /** When this accepted connection first waited ({@link #acceptLater}); 0 before. Event-loop state. */
    private long acceptWaitStart;

    /**
     * Whether the core hears of this accepted connection later: a connection from the same peer has failed or
     * closed, and the core has not heard of that yet. The peer reconnects a path it dropped within a millisecond of
     * its reset, and Netty may hand this connection over before the old one's close, queued behind it on the event
     * loop. The core would find the path still up and refuse the new connection, and a reset of a connection the
     * peer has already sent on loses what TCP acknowledged there (docs/reliability.md). Looked at again every 100 µs,
     * for up to {@link #ACCEPT_WAIT_NANOS}.
     */
    private boolean acceptLater() {
        if (!instance.closingFrom(remote.getAddress(), this)) {
            return false;
        }
        long now = System.nanoTime();
        if (acceptWaitStart == 0) {
            acceptWaitStart = now;
            log.debug("{}: waiting for the close of the peer's earlier connection before accepting", this);
        } else if (now - acceptWaitStart >= ACCEPT_WAIT_NANOS) {
            return false;
        }
        try {
            channel.eventLoop().schedule(() -> {
                if (channel.isActive() && !live) {
                    established();
                }
            }, 100, TimeUnit.MICROSECONDS);
        } catch (RejectedExecutionException e) {
            return false;                           // the event loop has shut down: the stack is closing
        }
        return true;
    }

    /** The connection is there for the core: TCP connected, and with TLS, authenticated both ways. */
    private void established() {
        if (outgoing) {
            live = true;
            callerOk = callerSocket != null && !instance.closed(); // a closing instance shut the gate
            log.debug("{}: connected", this);
            try {
                handler.onConnected(this);
            } catch (Throwable t) {
                log.warn("{}: onConnected failed; closing the connection", this, t);
                fail(t);
            }
            return;
        }
        if (acceptLater()) {
            return;
        }
        ConnectionHandler h;
        try {
            h = !tls && instance.refusesPlain(this) ? null : instance.host().accept(this);
        } catch (Throwable t) {
            log.warn("{}: accept failed; resetting the connection", this, t);
            h = null;
        }
        if (h == null) {
            log.debug("{}: refused; resetting", this);
            reset();
        } else {
            handler = h;
            live = true;
            callerOk = callerSocket != null && !instance.closed(); // a closing instance shut the gate
            log.debug("{}: accepted", this);
            channel.config().setAutoRead(readable); // also starts the first read
        }
    }

    /**
     * The buffer the next read goes into if the core has a target for it (on the event loop, from this channel's
     * {@link RecyclingRecvByteBufAllocator}): the rest of a large message's payload, in a waiting reader's direct
     * buffer or the message's own, then arrives with no copy out of a read buffer.
     *
     * @return the core's buffer as a read buffer, or {@code null} to read into a recycled buffer
     */
    ByteBuf inPlaceReadBuffer() {
        if (!delivering() || inPlaceReading) {
            return null;
        }
        ReadTarget t = handler.readTarget();
        if (t == null) {
            return null;
        }
        inPlaceReading = true;
        return InPlaceReadBuf.begin(t, this);
    }

    /** The read into the core's buffer is over, with {@code n} bytes in it: the core takes them as stream bytes. */
    void inPlaceReadEnded(int n) {
        if (inPlaceReading) {
            inPlaceReading = false;
            handler.onBytesReadInPlace(n);
        }
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (msg instanceof InPlaceReadBuf b) {
            readAny = true;
            try {
                inPlaceReadEnded(delivering() ? b.readableBytes() : 0);
            } finally {
                b.release();
            }
            return;
        }
        if (!(msg instanceof ByteBuf)) {
            ReferenceCountUtil.release(msg);
            return;
        }
        ByteBuf buf = (ByteBuf) msg;
        try {
            int n = buf.readableBytes();
            readAny |= n > 0;
            if (n > 0 && delivering()) {
                if (buf.nioBufferCount() == 1) {
                    handler.onBytes(buf.internalNioBuffer(buf.readerIndex(), n));
                } else {
                    for (ByteBuffer b : buf.nioBuffers(buf.readerIndex(), n)) {
                        handler.onBytes(b);
                    }
                }
            }
        } finally {
            buf.release();
        }
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        if (channel.isWritable()) {
            requestTransmit();
        }
        ctx.fireChannelWritabilityChanged();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable t) {
        log.debug("{}: {}", this, t.toString());
        fail(t);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        callerOk = false;
        sink.discard();
        inPlaceReadEnded(0);                        // a read in place that Netty never passed on
        if (live && !closedNotified) {
            closedNotified = true;
            log.debug("{}: closed{}", this, cause == null ? "" : " (" + cause + ")");
            handler.onClosed(closeCause());         // takes the connection: no caller is inside it after this
            releaseCallerBuffers();
        } else if (outgoing && !live && local != null && !connectFailedNotified) {
            // TCP connected but the TLS handshake never completed: to the core, the connect failed.
            // The TCP connection was made: the peer failed the handshake (certificates), or ended the connection
            // before it (a stack whose admission refuses us resets it so). A handshake that timed out is no answer.
            connectFailedNotified = true;
            handler.onConnectFailed(refusal());
        }
        instance.closing(this, false);
        ctx.fireChannelInactive();
    }

    /**
     * Why the connection closed, as the core hears it. With TLS 1.3 a client's handshake is done before the server
     * has checked the client's certificate: a server that does not trust it (or gets none) ends a connection that is
     * already up here, with an alert or a plain close, before it sends a byte. That is reported as an authentication
     * failure; a reset before any byte is not (the server's admission resets, as over plain TCP). On the event loop.
     */
    private Throwable closeCause() {
        if (!tls || !outgoing || readAny || localClose) {
            return cause;                           // not the peer's doing before a byte: as it is
        }
        SSLException ssl = handshakeError(cause);
        if (ssl != null) {
            return new PeerRefusedException("TLS failed: " + ssl.getMessage(), true, cause);
        }
        if (cause == null) {
            return new PeerRefusedException("the peer closed the connection right after the TLS handshake, before"
                    + " sending anything, as a TLS 1.3 peer does that refuses our certificate (or its absence)", true,
                    null);
        }
        return cause;
    }

    /** What the core hears of an outgoing TLS connection that never completed its handshake. On the event loop. */
    private IOException refusal() {
        String peer = TcpTransportInstance.describe(remoteAddress());
        if (cause instanceof io.netty.handler.ssl.SslHandshakeTimeoutException) {
            return new IOException("the TLS handshake with " + peer + " timed out", cause);
        }
        SSLException ssl = handshakeError(cause);
        if (handshakeFailed && ssl != null) {
            return new PeerRefusedException("the TLS handshake failed: " + ssl.getMessage(), true, cause);
        }
        return new PeerRefusedException(peer + " ended the connection before the TLS handshake did"
                + (cause == null ? "" : " (" + cause.getMessage() + ")"), false, cause);
    }

    /** The TLS error in {@code t}'s causes, or {@code null}. */
    private static SSLException handshakeError(Throwable t) {
        for (int depth = 0; t != null && depth < 8; depth++, t = t.getCause()) {
            if (t instanceof SSLException e) {
                return e;
            }
        }
        return null;
    }

    @Override
    public String toString() {
        return "TcpConnection[" + TcpTransportInstance.describe(localAddress())
                + (outgoing ? " -> " : " <- ") + TcpTransportInstance.describe(remoteAddress()) + (tls ? ", TLS" : "")
                + "]";
    }
}
