package org.rds4j.transport.loopback;

import java.io.IOException;
import java.net.BindException;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.rds4j.core.spi.ConnectionHandler;
import org.rds4j.core.spi.IoThread;
import org.rds4j.core.spi.TransportHost;
import org.rds4j.core.spi.TransportInstance;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The loopback transport of one stack. One thread, the stack's "I/O thread", runs every handler call of this stack's
 * connection ends, so calls for one connection never overlap, as the SPI promises: by default the thread the JVM's
 * loopback stacks share ({@link LoopbackLoops}), with {@code loopback.sharedLoop=false} one of the stack's own.
 */
final class LoopbackInstance implements TransportInstance {
    private static final Logger LOG = LoggerFactory.getLogger(LoopbackInstance.class);
    private static final AtomicInteger PORTS = new AtomicInteger(32768);

    /** How long an idle loopback thread yields before it parks unless {@code loopback.yieldMicros} says otherwise. */
    static final long DEFAULT_YIELD_MICROS = 100;
    /** Tasks a loop queues at once; see the constructor. */
    private static final int LOOP_CAPACITY = 1 << 16;

    private final TransportHost host;
    private final LoopbackLoop loop;
    /** Whether {@link #loop} is the JVM's shared one ({@link LoopbackLoops}) rather than this stack's own. */
    private final boolean sharedLoop;
    private final Set<InetAddress> listening = ConcurrentHashMap.newKeySet();
    private final Set<LoopbackEndpoint> endpoints = ConcurrentHashMap.newKeySet();
    private final int highWaterMark;
    private volatile boolean closed;
    /** Closing has begun: this stack queues no more tasks, and those it queued before run to their end. */
    private volatile boolean retired;

    LoopbackInstance(TransportHost host) {
        this.host = host;
        this.highWaterMark = Integer.parseInt(host.config().property("loopback.highWaterMark", "1048576"));
        // Most tasks are an endpoint's preallocated "transmit" or "deliver", queued once while pending, so the queue
        // never comes near full; if it did, another thread waits for room, and the loop's own thread (which must
        // not wait for itself) runs the task at once.
        long yieldNanos = yieldMicros(host.config().property("loopback.yieldMicros",
                Long.toString(DEFAULT_YIELD_MICROS))) * 1_000L;
        this.sharedLoop = sharedLoop(host.config().property("loopback.sharedLoop", "true"));
        this.loop = sharedLoop ? LoopbackLoops.acquire(yieldNanos, LOOP_CAPACITY)
                : new LoopbackLoop("rds4j-" + host.config().name() + "-loop", LOOP_CAPACITY, yieldNanos);
    }

    private static boolean sharedLoop(String value) {
        String v = value.trim();
        if (v.equalsIgnoreCase("true") || v.equalsIgnoreCase("false")) {
            return Boolean.parseBoolean(v);
        }
        throw new IllegalArgumentException("loopback.sharedLoop must be true (the stacks of this JVM share one"
                + " loopback thread) or false (this stack has its own), was \"" + value + "\"");
    }

    private static long yieldMicros(String value) {
        try {
            long v = Long.parseLong(value.trim());
            if (v >= 0 && v <= 1_000_000) {
                return v;
            }
        } catch (NumberFormatException e) {
            // below
        }
        throw new IllegalArgumentException("loopback.yieldMicros must be a whole number of microseconds from 0 to"
                + " 1000000, was \"" + value + "\"");
    }

    TransportHost host() {
        return host;
    }

    int highWaterMark() {
        return highWaterMark;
    }

    /** Our thread moved {@code bytes} of some end's stream; on that thread. */
    void moved(int bytes) {
        loop.moved(bytes);
    }

    /** Stream bytes our thread has moved so far, for every stack it serves; any thread. */
    long moved() {
        return loop.moved();
    }

    /** This stack's thread, as the core sees it: the owner of every connection of the stack. */
    private final IoThread ioThread = new IoThread() {
        @Override
        public boolean inThread() {
            return loop.inLoop();
        }

        @Override
        public void execute(Runnable task) {
            if (retired || !loop.execute(task)) {
                throw new RejectedExecutionException("the loopback transport of stack " + host.config().name()
                        + " is closed");
            }
        }
    };

    /** One thread serves every connection of a stack (and of the other stacks sharing it): it owns them all. */
    @Override
    public IoThread ioThread(InetAddress local, InetAddress peer) {
        return ioThread;
    }

    /** Runs a task on this stack's thread; dropped once the instance is closed. */
    void execute(Runnable task) {
        if (!retired) {                          // refused once closed: the endpoints were aborted, their handlers told
            loop.execute(task);
        }
    }

    void removed(LoopbackEndpoint e) {
        endpoints.remove(e);
    }

    @Override
    public boolean canBind(InetAddress address) {
        return !address.isAnyLocalAddress() && !address.isMulticastAddress();
    }

    @Override
    public void listen(InetAddress local) throws IOException {
        if (!LoopbackFabric.listen(local, host.config().tcpPort(), this)) {
            throw new BindException("another stack of this JVM listens on " + local.getHostAddress() + " port "
                    + host.config().tcpPort() + " (loopback transport)");
        }
        listening.add(local);
    }

    @Override
    public void unlisten(InetAddress local) {
        if (listening.remove(local)) {
            LoopbackFabric.unlisten(local, host.config().tcpPort(), this);
        }
    }

    @Override
    public void connect(InetAddress local, InetAddress peer, int pathIndex, ConnectionHandler handler) {
        LoopbackInstance remote = LoopbackFabric.listener(peer, host.config().tcpPort());
        if (remote == null || closed) {
            execute(() -> handler.onConnectFailed(new ConnectException("connection refused: no stack of this JVM"
                    + " listens on " + peer.getHostAddress() + " port " + host.config().tcpPort())));
            return;
        }
        // A made-up port in 32768..65535, unique enough for a JVM's connections; with a path index, in the group
        // of 8 the path index selects, as TCP does it (SPORT_IDX).
        int port = pathIndex < 0 ? PORTS.getAndIncrement() & 0x7FFF | 0x8000
                : PORTS.getAndAdd(PATH_PORT_MODULUS) & 0x7FF8 | 0x8000 | pathIndex;
        InetSocketAddress ours = new InetSocketAddress(local, port);
        InetSocketAddress theirs = new InetSocketAddress(peer, host.config().tcpPort());
        LoopbackEndpoint client = new LoopbackEndpoint(this, ours, theirs);
        LoopbackEndpoint server = new LoopbackEndpoint(remote, theirs, ours);
        client.pair(server);
        server.pair(client);
        endpoints.add(client);
        remote.endpoints.add(server);
        // As with TCP, the connect completes first; the acceptor decides afterwards and may reset.
        execute(() -> {
            client.handler(handler);
            handler.onConnected(client);
            remote.execute(() -> remote.accept(server));
        });
    }

    private void accept(LoopbackEndpoint server) {
        ConnectionHandler handler = closed ? null : host.accept(server);
        if (handler == null) {
            server.abort();
        } else {
            server.handler(handler);
            server.deliverNow();
        }
    }

    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        for (InetAddress a : listening) {
            unlisten(a);
        }
        for (LoopbackEndpoint e : endpoints) {
            e.abort();
        }
        try {
            if (sharedLoop) {
                retired = true;                  // the aborts' tasks are queued: they run, later ones are refused
                awaitQueued();
                LoopbackLoops.release(loop, 5, TimeUnit.SECONDS);
            } else {
                loop.close(5, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Waits, at most 5 s, until the tasks this stack queued on the shared loop have run, as a loop of its own drains
     * before it ends; from the loop's thread, they run once the closing task returns.
     */
    private void awaitQueued() throws InterruptedException {
        if (loop.inLoop()) {
            return;
        }
        CountDownLatch done = new CountDownLatch(1);
        if (loop.execute(done::countDown) && !done.await(5, TimeUnit.SECONDS)) {
            LOG.warn("the loopback transport of stack {} closed with its tasks still queued after 5 s",
                    host.config().name());
        }
    }
}
