package org.rds4j.transport.tcp;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.ServerChannel;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollChannelOption;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioChannelOption;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.ssl.SslHandler;
import io.netty.util.concurrent.FastThreadLocalThread;
import java.io.IOException;
import java.net.BindException;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;
import javax.net.ssl.SSLEngine;
import jdk.net.ExtendedSocketOptions;
import org.rds4j.RdsAddresses;
import org.rds4j.RdsStackConfig;
import org.rds4j.RdsTlsConfig;
import org.rds4j.core.spi.ConnectionHandler;
import org.rds4j.core.spi.ConnectResetException;
import org.rds4j.core.spi.TransportHost;
import org.rds4j.core.spi.TransportInstance;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The TCP transport of one stack: its event loops, its listeners (one per local address, as the core asks) and
 * every connection they accepted or it opened.
 *
 * <p>Each instance owns its event loop group, so stacks in one JVM share no thread and closing one stack cannot
 * disturb another. One I/O thread is the default: RDS per-path work is serial anyway, and one thread handles many
 * connections at full loopback speed; {@code tcp.ioThreads} adds more for many busy peers (each pair of addresses
 * stays on one of them: {@link PeerAffineLoopGroup}).
 *
 * <p>Every socket, accepted or connected, is tuned as the kernel tunes RDS sockets: {@code TCP_NODELAY} (RDS sends
 * whole messages and wants them on the wire at once; batching happens in the transport, not in Nagle's algorithm)
 * and {@code SO_KEEPALIVE} with 5 s idle, 5 s interval, 5 probes, so that a silently vanished peer is noticed in
 * about 30 s and the core reconnects.
 *
 * <p>With {@link RdsStackConfig#tls()} set, each local address also gets a TLS listener on the TLS port, and
 * connections to peers that must use TLS go there with an {@link SslHandler} ahead of the connection's handler;
 * a plain connection from such a peer is refused. The bytes inside TLS are the same RDS/TCP stream.
 */
public final class TcpTransportInstance implements TransportInstance {
    private static final Logger log = LoggerFactory.getLogger(TcpTransportInstance.class);
    private static final AtomicBoolean LOGGED_IO_CHOICE = new AtomicBoolean();

    /**
     * The listen backlog (the kernel caps it at {@code net.core.somaxconn}). Larger than the kernel's RDS/TCP 64: a
     * peer's handshake completes in the kernel without us, so connections can arrive faster than one event loop
     * accepts them, and once the queue is full the kernel drops every further SYN, which its sender retries only
     * after its 1 s initial retransmission timeout. With 64, a flood of connections got through at about 70 a second
     * (backlog + 1 per second), honest peers' reconnects queued behind it; with 1024, at about 740.
     */
    static final int BACKLOG = 1024;
    /** The kernel's RDS keepalive: idle seconds, probe interval seconds, probe count. */
    static final int KEEPALIVE_IDLE = 5;
    static final int KEEPALIVE_INTERVAL = 5;
    static final int KEEPALIVE_COUNT = 5;
    /** How long close() waits for connections to close and event loops to stop. */
    private static final long CLOSE_TIMEOUT_MS = 5_000;
    /** The name of a TLS connection's SslHandler in its pipeline. */
    static final String TLS_HANDLER_NAME = "rds4j-tls";

    private final TransportHost host;
    private final String stackName;
    private final int port;
    /** The port peers listen on; the stack's own port unless a test puts a proxy in between. */
    private final int peerPort;
    private final boolean epoll;
    /** Application threads do the sockets' I/O: under busy-poll (decision 0031), or tcp.callerIo (default on epoll). */
    private final boolean callerIo;
    /**
     * Under tcp.callerIo without busy-poll, how long a path's reading stays the callers' after the last reader's poll
     * before the I/O thread takes it back ({@link TcpConnection}); 0 under busy-poll, whose readers keep polling.
     */
    private final long readerLeaseNanos;
    private final PeerAffineLoopGroup group;
    private final int connectTimeoutMs;
    private final WriteBufferWaterMark waterMark;
    private final PathSourcePorts sourcePorts = PathSourcePorts.system();
    private final Map<InetAddress, Channel> listeners = new ConcurrentHashMap<>();
    /** TLS listeners by local address, when TLS is on (under the {@code listeners} monitor, as those). */
    private final Map<InetAddress, Channel> tlsListeners = new ConcurrentHashMap<>();
    private final RdsTlsConfig tls;
    private final TlsRefusals tlsRefusals;
    private final Set<Channel> connections = ConcurrentHashMap.newKeySet();
    /** Connections that failed or closed whose close the core has not heard yet ({@link TcpConnection}). */
    private final Set<TcpConnection> closing = ConcurrentHashMap.newKeySet();
    /**
     * The pool every buffer of this instance's channels comes from: read buffers, write batches, TLS buffers. The
     * instance's own, not Netty's shared one, so that what it holds is this stack's and counts against the stack's
     * off-heap bound ({@link #poolUse}). A closed connection's buffers go back to it when Netty releases them (reads
     * and batches in flight, TLS buffers, the outbound queue), not to a garbage collector; it keeps what its I/O
     * threads last used, and gives a chunk of 4 MiB back to the operating system once nothing is in it.
     */
    private final PooledByteBufAllocator pool;
    /** What the pool holds from the operating system, for the stack's off-heap account. */
    private final java.util.function.LongSupplier poolUse;
    private volatile boolean closed;

    TcpTransportInstance(TransportHost host) throws IOException {
        this.host = host;
        RdsStackConfig config = host.config();
        this.stackName = config.name();
        this.port = config.tcpPort();
        this.tls = config.tls();
        this.tlsRefusals = new TlsRefusals(stackName);
        this.peerPort = intProperty(config, "tcp.peerPort", port, 1);
        int ioThreads = intProperty(config, "tcp.ioThreads", 1, 1);
        this.connectTimeoutMs = intProperty(config, "tcp.connectTimeoutMs", 10_000, 1);
        int low = intProperty(config, "tcp.lowWaterMark", 256 * 1024, 0);
        int high = intProperty(config, "tcp.highWaterMark", 1024 * 1024, 1);
        if (low > high) {
            throw new IllegalArgumentException("tcp.lowWaterMark (" + low + ") exceeds tcp.highWaterMark (" + high
                    + ")");
        }
        this.waterMark = new WriteBufferWaterMark(low, high);

        boolean wantNative = !"false".equalsIgnoreCase(config.property("tcp.native", "true"));
        this.epoll = wantNative && Epoll.isAvailable();
        // Busy-poll: application threads read and write the sockets themselves (caller I/O, decision 0031), on the
        // epoll descriptors inside each connection's gate, which the event loop shuts before it closes the channel
        // (decision 0039); without epoll, on the JDK's channels under Netty's NIO ones. tcp.callerIo: the same
        // without busy-poll, for a reader waiting for a reply in its yielding window only (decision 0033); on by
        // default on epoll, where it shortens round trips and costs streams nothing, off on NIO (decision 0040).
        boolean callerIoWhileWaiting = booleanProperty(config, "tcp.callerIo", epoll);
        this.callerIo = config.busyPoll() || callerIoWhileWaiting;
        this.readerLeaseNanos = config.busyPoll() || !callerIoWhileWaiting ? 0 : READER_LEASE_NANOS;
        // How the I/O threads wait when idle (BackoffSelectStrategy): yield for tcp.yieldMicros after their last
        // work, then sleep in epoll_wait (or select, under caller I/O).
        long yieldNanos = intProperty(config, "tcp.yieldMicros", BackoffSelectStrategy.DEFAULT_YIELD_MICROS, 0)
                * 1_000L;
        boolean backoff = (epoll || callerIo) && yieldNanos > 0;
        IoHandlerFactory ioHandler = epoll
                ? (backoff ? EpollIoHandler.newFactory(0, () -> new BackoffSelectStrategy(yieldNanos))
                        : EpollIoHandler.newFactory())
                : backoff ? BackoffSelectStrategy.nioFactory(yieldNanos)
                : NioIoHandler.newFactory();
        String why = (epoll ? "native epoll" : wantNative ? "NIO (epoll unavailable: " + Epoll.unavailabilityCause()
                + ")" : "NIO (tcp.native=false)")
                + (config.busyPoll() ? ", busy-poll: application threads read and write the sockets"
                : callerIo ? ", caller I/O (tcp.callerIo): application threads waiting for a reply read and write the"
                        + " sockets" : "")
                + (backoff ? ", yielding " + yieldNanos / 1000 + " us before sleeping" : "");
        if (LOGGED_IO_CHOICE.compareAndSet(false, true)) {
            log.info("rds4j TCP transport uses {}", why);
        } else {
            log.debug("stack {}: TCP transport uses {} with {} I/O thread(s)", stackName, why, ioThreads);
        }
        this.group = new PeerAffineLoopGroup(ioThreads, new IoThreadFactory(stackName), ioHandler);
        // One direct and one heap arena per I/O thread (each thread takes its own arena), chunks of 4 MiB (pages of
        // 8 KiB, order 9), Netty's default thread caches, for the I/O threads only.
        this.pool = new PooledByteBufAllocator(true, ioThreads, ioThreads, 8192, 9, 256, 64, false);
        PooledByteBufAllocator p = pool;
        this.poolUse = () -> p.metric().usedDirectMemory();
        host.offHeap().addPool(poolUse);
    }

    /**
     * How long reading stays the callers' after a reader's last poll under tcp.callerIo: a reader that got its reply
     * and sends the next request within it finds the socket still its own, and a message for a socket that nobody
     * polls waits at most this long (plus the I/O thread's turn) to be read.
     */
    static final long READER_LEASE_NANOS = 200_000;

    private static boolean booleanProperty(RdsStackConfig config, String key, boolean fallback) {
        String value = config.property(key, null);
        if (value == null) {
            return fallback;
        }
        String v = value.trim();
        if (v.equalsIgnoreCase("true")) {
            return true;
        }
        if (v.equalsIgnoreCase("false")) {
            return false;
        }
        throw new IllegalArgumentException(key + " must be true or false, was \"" + value + "\"");
    }

    private static int intProperty(RdsStackConfig config, String key, int fallback, int min) {
        String value = config.property(key, null);
        if (value == null) {
            return fallback;
        }
        int v;
        try {
            v = Integer.parseInt(value.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(key + " must be an integer, was \"" + value + "\"", e);
        }
        if (v < min) {
            throw new IllegalArgumentException(key + " must be at least " + min + ", was " + v);
        }
        return v;
    }

    /**
     * Whether this instance runs on native epoll (else on NIO).
     *
     * @return true on epoll
     */
    public boolean isNative() {
        return epoll;
    }

    @Override
    public boolean callerIo() {
        return callerIo;
    }

    /** Whether {@link #close} has begun: connections established from now on give callers no socket. */
    boolean closed() {
        return closed;
    }

    /** How long a path's reading stays the callers' after their last poll; 0: until the maintenance turn. */
    long readerLeaseNanos() {
        return readerLeaseNanos;
    }

    private io.netty.channel.ChannelFactory<ServerChannel> serverChannels() {
        if (epoll) {
            return EpollServerSocketChannel::new;
        }
        return callerIo ? CallerIoServerSocketChannel::new : NioServerSocketChannel::new;
    }

    private io.netty.channel.ChannelFactory<Channel> channels() {
        if (epoll) {
            return EpollSocketChannel::new;
        }
        return callerIo ? CallerIoSocketChannel::new : NioSocketChannel::new;
    }

    TransportHost host() {
        return host;
    }

    @Override
    public boolean canBind(InetAddress address) {
        if (address == null || address.isAnyLocalAddress() || address.isMulticastAddress()) {
            return false;
        }
        if (address.isLoopbackAddress()) {
            return true;            // all of 127/8 and ::1, whether or not an interface lists them
        }
        try {
            return NetworkInterface.getByInetAddress(address) != null;
        } catch (SocketException e) {
            return false;
        }
    }

    /**
     * {@inheritDoc}
     *
     * <p>Blocks until the socket is bound (a local operation); do not call it from this transport's I/O threads.
     */
    @Override
    public void listen(InetAddress local) throws IOException {
        if (closed) {
            throw new IOException("the TCP transport of stack " + stackName + " is closed");
        }
        synchronized (listeners) {
            if (listeners.containsKey(local)) {
                return;
            }
            Channel plain = bind(local, port, false);
            if (tls != null) {
                try {
                    tlsListeners.put(local, bind(local, tls.port(), true));
                } catch (IOException e) {
                    plain.close();
                    throw e;
                }
            }
            listeners.put(local, plain);
        }
    }

    /** Binds one listener; accepted connections start with reading off, until the core takes them. */
    private Channel bind(InetAddress local, int listenPort, boolean withTls) throws IOException {
        ServerBootstrap b = new ServerBootstrap()
                .group(group)
                .channelFactory(serverChannels())
                .option(ChannelOption.SO_BACKLOG, BACKLOG)
                .option(ChannelOption.SO_REUSEADDR, true)
                .childOption(ChannelOption.AUTO_READ, false)         // nothing is read before accept decides
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        pipeline(ch, withTls ? serverEngine() : null, null);
                    }
                });
        ChannelFuture f = b.bind(new InetSocketAddress(local, listenPort)).awaitUninterruptibly();
        if (!f.isSuccess()) {
            Throwable cause = f.cause();
            BindException e = new BindException("cannot listen for RDS/" + (withTls ? "TLS" : "TCP") + " on "
                    + local.getHostAddress() + " port " + listenPort + ": " + (cause == null ? "unknown error"
                    : cause.getMessage()));
            e.initCause(cause);
            throw e;
        }
        log.debug("stack {}: listening{} on {}", stackName, withTls ? " for TLS" : "", f.channel().localAddress());
        return f.channel();
    }

    /** The server end of a TLS connection: it requires the peer's certificate too (mutual authentication). */
    /**
     * A new channel's pipeline, either side: TLS first if {@code tls} is given, then the connection. {@code handler}
     * is the core's for a connection we open, {@code null} for one we accept (the core picks it then).
     */
    private void pipeline(SocketChannel ch, SSLEngine tls, ConnectionHandler handler) {
        tune(ch);
        track(ch);
        if (tls != null) {
            ch.pipeline().addLast(TLS_HANDLER_NAME, new SslHandler(tls));
        }
        RecyclingRecvByteBufAllocator reads = new RecyclingRecvByteBufAllocator();
        ch.config().setOption(ChannelOption.RCVBUF_ALLOCATOR, reads);   // reads into the I/O thread's reused buffers
        TcpConnection c = new TcpConnection(this, ch, handler, tls != null);
        if (tls == null) {
            reads.readInPlaceFor(c);  // before the first read, which waits for this task on the event loop to end
        }
        ch.pipeline().addLast(TcpConnection.HANDLER_NAME, c);
    }

    private SSLEngine serverEngine() {
        SSLEngine e = tls.context().createSSLEngine();
        e.setUseClientMode(false);
        e.setNeedClientAuth(true);
        return e;
    }

    private SSLEngine clientEngine(InetSocketAddress peer) {
        SSLEngine e = tls.context().createSSLEngine(peer.getAddress().getHostAddress(), peer.getPort());
        e.setUseClientMode(true);
        return e;
    }

    /**
     * Whether a connection accepted on the plain RDS/TCP port must be refused: its peer must use TLS. Logs the
     * refusal (at most once a minute). On the connection's I/O thread.
     */
    boolean refusesPlain(TcpConnection c) {
        if (tls == null || !tls.requiredFor(c.remoteAddress().getAddress())) {
            return false;
        }
        tlsRefusals.plainRefused(c.remoteAddress(), tls.port());
        return true;
    }

    TlsRefusals tlsRefusals() {
        return tlsRefusals;
    }

    @Override
    public void unlisten(InetAddress local) {
        Channel ch;
        Channel tlsCh;
        synchronized (listeners) {
            ch = listeners.remove(local);
            tlsCh = tlsListeners.remove(local);
        }
        for (Channel c : new Channel[] {ch, tlsCh}) {
            if (c != null) {
                log.debug("stack {}: no longer listening on {}", stackName, c.localAddress());
                c.close();
            }
        }
    }

    @Override
    public org.rds4j.core.spi.IoThread ioThread(InetAddress local, InetAddress peer) {
        return group.ioThread(local, peer);
    }

    /** Called on {@link #ioThread}, as the core connects only there: a failure reported at once is on that thread. */
    @Override
    public void connect(InetAddress local, InetAddress peer, int pathIndex, ConnectionHandler handler) {
        if (closed) {
            handler.onConnectFailed(new IOException("the TCP transport of stack " + stackName + " is closed"));
            return;
        }
        if (pathIndex < 0) {
            open(local, 0, peer, handler, null);
        } else {
            connectFromPathPort(local, peer, pathIndex, sourcePorts.firstGroup(), 0, handler);
        }
    }

    /** One attempt with a port of path {@code pathIndex}'s; a port in use moves on to the next group. */
    private void connectFromPathPort(InetAddress local, InetAddress peer, int pathIndex, int firstGroup, int attempt,
                                     ConnectionHandler handler) {
        int localPort = sourcePorts.port(firstGroup, attempt, pathIndex);
        open(local, localPort, peer, handler, cause -> {
            if (isAddressInUse(cause) && attempt + 1 < sourcePorts.attempts() && !closed) {
                connectFromPathPort(local, peer, pathIndex, firstGroup, attempt + 1, handler);
                return true;
            }
            return false;
        });
    }

    /**
     * Opens one connection from {@code local:localPort}. {@code retry}, when given, sees a failure first and
     * returns true if it took it over with another attempt.
     */
    private void open(InetAddress local, int localPort, InetAddress peer, ConnectionHandler handler,
                      Predicate<Throwable> retry) {
        boolean withTls = tls != null && tls.requiredFor(peer);
        InetSocketAddress to = new InetSocketAddress(peer, withTls ? tls.port() : peerPort);
        Bootstrap b = new Bootstrap()
                .group(group.loop(local, peer))     // the thread that owns the core's connection to the peer
                .channelFactory(channels())
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, connectTimeoutMs)
                // A path's port may still be in TIME_WAIT from its previous connection: binding it again is safe
                // (the 4-tuple's old incarnation is over), as the kernel allows for its own RDS sockets.
                .option(ChannelOption.SO_REUSEADDR, localPort != 0)
                .handler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        pipeline(ch, withTls ? clientEngine(to) : null, handler);
                    }
                });
        ChannelFuture f;
        try {
            f = b.connect(to, new InetSocketAddress(local, localPort));
        } catch (RuntimeException e) {    // the group was shut down under us
            handler.onConnectFailed(e);
            return;
        }
        // Success is reported by the connection itself, in channelActive, so that onConnected precedes every read.
        f.addListener((ChannelFuture done) -> {
            if (!done.isSuccess() && (retry == null || !retry.test(done.cause()))) {
                handler.onConnectFailed(connectFailure(to, done.cause()));
            }
        });
    }

    /**
     * What a failed connect tells the core. A reset means the connection was made: the peer's TCP answered the
     * handshake (with nothing listening it refuses the SYN instead, ECONNREFUSED) and a process there ended the
     * connection before sending anything, as a stack whose admission refuses us does. Whether that reset overtakes the
     * event loop's finishing of the connect or comes after it is a matter of scheduling, so it is the same refusal
     * either way (a {@link ConnectResetException}, which the core takes as it takes a connection that ends before any
     * byte), not a peer the network cannot reach.
     */
    static Throwable connectFailure(InetSocketAddress to, Throwable cause) {
        if (isReset(cause)) {
            return new ConnectResetException(RdsAddresses.format(to) + " reset the connection as it was made, before"
                    + " sending anything (" + cause.getMessage() + ")", cause);
        }
        return cause;
    }

    /**
     * ECONNRESET, however the channel reports it: Linux's words for it ("Connection reset by peer") in Netty's native
     * connect errors, the JDK's ("Connection reset") in NIO's.
     */
    private static boolean isReset(Throwable cause) {
        return cause instanceof IOException && String.valueOf(cause.getMessage()).contains("Connection reset");
    }

    /** EADDRINUSE, however the channel type reports it (NIO: BindException; native: its own IOException). */
    private static boolean isAddressInUse(Throwable cause) {
        return cause instanceof BindException
                || cause instanceof IOException
                        && String.valueOf(cause.getMessage()).contains("Address already in use");
    }

    /** Applies the kernel's RDS socket tuning ({@code rds_tcp_tune}, {@code rds_tcp_keepalive}) and our buffers. */
    private void tune(SocketChannel ch) {
        ch.config().setOption(ChannelOption.TCP_NODELAY, true);
        ch.config().setOption(ChannelOption.SO_KEEPALIVE, true);
        ch.config().setOption(ChannelOption.ALLOCATOR, pool);
        ch.config().setOption(ChannelOption.WRITE_BUFFER_WATER_MARK, waterMark);
        // A failed write shuts the output down instead of closing: the connection reads what the peer sent before it
        // failed, and the end of the stream closes it (TcpConnection, "Failure").
        ch.config().setOption(ChannelOption.AUTO_CLOSE, false);
        try {
            if (epoll) {
                ch.config().setOption(EpollChannelOption.TCP_KEEPIDLE, KEEPALIVE_IDLE);
                ch.config().setOption(EpollChannelOption.TCP_KEEPINTVL, KEEPALIVE_INTERVAL);
                ch.config().setOption(EpollChannelOption.TCP_KEEPCNT, KEEPALIVE_COUNT);
            } else if (ExtendedSocketOptions.TCP_KEEPIDLE != null) {
                ch.config().setOption(NioChannelOption.of(ExtendedSocketOptions.TCP_KEEPIDLE), KEEPALIVE_IDLE);
                ch.config().setOption(NioChannelOption.of(ExtendedSocketOptions.TCP_KEEPINTERVAL),
                        KEEPALIVE_INTERVAL);
                ch.config().setOption(NioChannelOption.of(ExtendedSocketOptions.TCP_KEEPCOUNT), KEEPALIVE_COUNT);
            }
        } catch (RuntimeException e) {       // a platform without these options: plain keepalive still works
            log.debug("stack {}: cannot set TCP keepalive timings: {}", stackName, e.toString());
        }
    }

    /** {@code c} failed or closed, and the core has not heard of it yet ({@code true}), or now has. */
    void closing(TcpConnection c, boolean unreported) {
        if (unreported) {
            closing.add(c);
        } else {
            closing.remove(c);
        }
    }

    /** Whether a connection from {@code peer} other than {@code c} failed or closed, and the core has not heard. */
    boolean closingFrom(java.net.InetAddress peer, TcpConnection c) {
        for (TcpConnection o : closing) {
            if (o != c && peer.equals(o.remoteAddress().getAddress())) {
                return true;
            }
        }
        return false;
    }

    private void track(Channel ch) {
        if (closed) {
            ch.close();
            return;
        }
        connections.add(ch);
        ch.closeFuture().addListener(f -> connections.remove(ch));
    }

    /**
     * Closes every listener and connection (each connection's handler sees {@link ConnectionHandler#onClosed}),
     * then stops the event loops, waiting a bounded time for each step.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        List<ChannelFuture> closing = new ArrayList<>();
        synchronized (listeners) {
            for (Channel ch : listeners.values()) {
                closing.add(ch.close());
            }
            for (Channel ch : tlsListeners.values()) {
                closing.add(ch.close());
            }
            listeners.clear();
            tlsListeners.clear();
        }
        for (Channel ch : connections) {
            // Each connection's close shuts its callers' gate (TcpConnection.close) on its event loop; a channel whose
            // close task has not run when the loop stops is closed by Netty itself, so the gates are shut here first.
            TcpConnection c = ch.pipeline().get(TcpConnection.class);
            if (c != null) {
                c.shutCallerIo();
            }
            closing.add(ch.close());
        }
        boolean onIoThread = isIoThread();
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(CLOSE_TIMEOUT_MS);
        if (!onIoThread) {
            for (ChannelFuture f : closing) {
                long left = deadline - System.nanoTime();
                if (left <= 0 || !f.awaitUninterruptibly(left, TimeUnit.NANOSECONDS)) {
                    break;
                }
            }
        }
        // Quiet period 0: every channel is closed already; the loops run their remaining tasks (the onClosed
        // calls) and stop.
        var terminated = group.shutdownGracefully(0, CLOSE_TIMEOUT_MS, TimeUnit.MILLISECONDS);
        if (!onIoThread) {
            long left = Math.max(0, deadline - System.nanoTime()) + TimeUnit.MILLISECONDS.toNanos(CLOSE_TIMEOUT_MS);
            if (!terminated.awaitUninterruptibly(left, TimeUnit.NANOSECONDS)) {
                log.warn("stack {}: TCP event loops did not stop within {} ms", stackName, CLOSE_TIMEOUT_MS);
            }
        }
        // The event loops are gone, and with them the buffers their recyclers and caches kept: what the pool still
        // holds is no longer the stack's to count.
        host.offHeap().removePool(poolUse);
        log.debug("stack {}: TCP transport closed", stackName);
    }

    private boolean isIoThread() {
        Thread t = Thread.currentThread();
        return t instanceof IoThread && ((IoThread) t).owner == this;
    }

    @Override
    public String toString() {
        return "TcpTransportInstance[stack=" + stackName + ", port=" + port + (tls == null ? "" : ", TLS port="
                + tls.port()) + ", " + (epoll ? "epoll" : "nio")
                + ", listening=" + listeners.keySet() + "]";
    }

    static String describe(InetSocketAddress a) {
        if (a == null) {
            return "?";
        }
        InetAddress ip = a.getAddress();
        String h = ip == null ? a.getHostString() : ip.getHostAddress();
        return (ip instanceof Inet6Address ? "[" + h + "]" : h) + ":" + a.getPort();
    }

    /** Event loop threads, named {@code rds4j-<stack>-tcp-<n>} so that thread dumps show whose they are. */
    private final class IoThreadFactory implements ThreadFactory {
        private final String prefix;
        private final AtomicInteger next = new AtomicInteger();

        IoThreadFactory(String stack) {
            this.prefix = "rds4j-" + stack + "-tcp-";
        }

        @Override
        public Thread newThread(Runnable r) {
            Thread t = new IoThread(TcpTransportInstance.this, r, prefix + next.getAndIncrement());
            t.setDaemon(true);      // a stack left open must not keep the JVM alive
            return t;
        }
    }

    private static final class IoThread extends FastThreadLocalThread {
        private final Object owner;

        IoThread(TcpTransportInstance instance, Runnable r, String name) {
            super(r, name);
            this.owner = instance;
        }
    }
}
