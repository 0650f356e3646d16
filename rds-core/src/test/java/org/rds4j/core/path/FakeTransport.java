package org.rds4j.core.path;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import org.rds4j.core.spi.ConnectionHandler;
import org.rds4j.core.spi.TransportConnection;
import org.rds4j.core.spi.IoThread;
import org.rds4j.core.spi.TransportInstance;

/**
 * A transport that does nothing by itself: it records {@link #connect} calls as {@link Attempt}s, which the test
 * completes, and hands out {@link FakeConnection}s that record what the core asks of them.
 */
final class FakeTransport implements TransportInstance {
    static final int RDS_TCP_PORT = 16385;

    /** One {@link #connect} call; completed at most once by the test. */
    static final class Attempt {
        final int id;
        final InetAddress local;
        final InetAddress peer;
        /** The path the core connects, whose index our source port would encode. */
        final int pathIndex;
        final ConnectionHandler handler;
        /** Set once the test reported success or failure. */
        boolean completed;
        /** The connection, if the test reported success. */
        FakeConnection connection;

        Attempt(int id, InetAddress local, InetAddress peer, int pathIndex, ConnectionHandler handler) {
            this.id = id;
            this.local = local;
            this.peer = peer;
            this.pathIndex = pathIndex;
            this.handler = handler;
        }

        @Override
        public String toString() {
            return "attempt#" + id + (completed ? (connection != null ? "(connected)" : "(failed)") : "(pending)");
        }
    }

    /** One established transport connection, outgoing or incoming. */
    static final class FakeConnection implements TransportConnection {
        final int id;
        final boolean outgoing;
        final InetSocketAddress local;
        final InetSocketAddress remote;
        /** The handler that owns it: the attempt's, or the one accept returned; null if refused. */
        ConnectionHandler handler;
        int transmitRequests;
        int closeCalls;
        int abortCalls;
        /** The transport reported {@link ConnectionHandler#onClosed}; nothing may follow. */
        boolean closedDelivered;
        /** Bytes written so far, and the stream offset at the end of each frame. */
        long streamOffset;
        final List<Long> frameEnds = new ArrayList<>();
        /** The highest offset reported through {@link ConnectionHandler#onTransmitted}. */
        long reported;
        /** Whether the test delivered any bytes of the peer on it (it proved itself: the backoff resets). */
        boolean bytesDelivered;

        FakeConnection(int id, boolean outgoing, InetSocketAddress local, InetSocketAddress remote) {
            this.id = id;
            this.outgoing = outgoing;
            this.local = local;
            this.remote = remote;
        }

        /** Not closed by either side: the core neither closed nor aborted it and the transport reported no close. */
        boolean live() {
            return handler != null && !closedDelivered && closeCalls == 0 && abortCalls == 0;
        }

        @Override
        public InetSocketAddress localAddress() {
            return local;
        }

        @Override
        public InetSocketAddress remoteAddress() {
            return remote;
        }

        @Override
        public void requestTransmit() {
            transmitRequests++;
        }

        /** Whether this connection keeps deadlines ({@link #requestTransmitAfter}); off, as a transport that cannot. */
        boolean keepsDeadlines;
        /** Passes asked for at a deadline, and the last delay asked for. */
        int delayedRequests;
        long lastDelayNanos;

        @Override
        public boolean requestTransmitAfter(long delayNanos) {
            if (!keepsDeadlines) {
                return false;
            }
            delayedRequests++;
            lastDelayNanos = delayNanos;
            return true;
        }

        @Override
        public void close() {
            closeCalls++;
        }

        @Override
        public void abort() {
            abortCalls++;
        }

        /** The last {@link #setReadable} the core asked for. */
        volatile boolean readable = true;

        @Override
        public void setReadable(boolean r) {
            readable = r;
        }

        @Override
        public String toString() {
            return "conn#" + id + (outgoing ? "(out" : "(in") + (closeCalls > 0 ? ",closed" : "")
                    + (abortCalls > 0 ? ",aborted" : "") + (closedDelivered ? ",onClosed" : "") + ")";
        }
    }

    final List<Attempt> attempts = new ArrayList<>();
    final List<FakeConnection> connections = new ArrayList<>();
    private int nextPort = 40000;

    @Override
    public boolean canBind(InetAddress address) {
        return true;
    }

    @Override
    public void listen(InetAddress local) {
    }

    @Override
    public void unlisten(InetAddress local) {
    }

    /**
     * The thread that made this transport is its I/O thread, as the test's one thread drives everything. A task
     * handed to it runs after the current event, as the scheduler's next task (virtual time does not move); without
     * a scheduler, at once.
     */
    private final Thread ioThread = Thread.currentThread();
    private final java.util.concurrent.Executor later;

    FakeTransport() {
        this(Runnable::run);
    }

    FakeTransport(java.util.concurrent.Executor later) {
        this.later = later;
    }

    /** Whether application threads may read and write this transport's connections ({@link #callerIo()}). */
    boolean callerIo;

    @Override
    public boolean callerIo() {
        return callerIo;
    }

    private final IoThread io = new IoThread() {
        @Override
        public boolean inThread() {
            return Thread.currentThread() == ioThread;
        }

        @Override
        public void execute(Runnable task) {
            later.execute(task);
        }
    };

    @Override
    public IoThread ioThread(InetAddress local, InetAddress peer) {
        return io;
    }

    @Override
    public void connect(InetAddress local, InetAddress peer, int pathIndex, ConnectionHandler handler) {
        attempts.add(new Attempt(attempts.size(), local, peer, pathIndex, handler));
    }

    /** A new connection object; outgoing ones go from an ephemeral port to 16385, incoming the other way. */
    FakeConnection newConnection(boolean outgoing, InetAddress local, InetAddress peer) {
        int eph = nextPort++;
        FakeConnection c = outgoing
                ? new FakeConnection(connections.size(), true, new InetSocketAddress(local, eph),
                        new InetSocketAddress(peer, RDS_TCP_PORT))
                : new FakeConnection(connections.size(), false, new InetSocketAddress(local, RDS_TCP_PORT),
                        new InetSocketAddress(peer, eph));
        connections.add(c);
        return c;
    }

    /** Completes attempt {@code a} with a new outgoing connection and reports it to the core; returns it. */
    FakeConnection connected(Attempt a) {
        a.completed = true;
        FakeConnection c = newConnection(true, a.local, a.peer);
        c.handler = a.handler;
        a.connection = c;
        a.handler.onConnected(c);
        return c;
    }

    List<Attempt> pendingAttempts() {
        return attempts.stream().filter(a -> !a.completed).toList();
    }

    /** Connections the transport may still report events on (bytes, transmit, close). */
    List<FakeConnection> open() {
        return connections.stream().filter(c -> c.handler != null && !c.closedDelivered).toList();
    }

    List<FakeConnection> live() {
        return connections.stream().filter(FakeConnection::live).toList();
    }

    @Override
    public void close() {
    }
}
