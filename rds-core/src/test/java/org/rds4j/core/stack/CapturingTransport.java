package org.rds4j.core.stack;

import java.io.ByteArrayOutputStream;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicInteger;
import org.rds4j.core.spi.ConnectionHandler;
import org.rds4j.core.spi.FrameSink;
import org.rds4j.core.spi.RdsTransport;
import org.rds4j.core.spi.TransportConnection;
import org.rds4j.core.spi.TransportHost;
import org.rds4j.core.spi.TransportInstance;

/**
 * A test transport for one {@link CoreStack}: nothing moves by itself. The test offers an incoming connection
 * ({@link #accept}), feeds it bytes, and pulls what the real {@link org.rds4j.core.path.ConnectionPath} writes
 * through a {@link FrameSink} ({@link #transmit}). rds-core's tests have no transport on the service path, so
 * {@link #install} puts this one into the stack's transport table.
 */
final class CapturingTransport implements RdsTransport {
    static final String NAME = "capture";

    private TransportHost host;
    /** The I/O thread every call into the core runs on. */
    final TestIoThread io = new TestIoThread("capture-io");

    /** Adds this transport to {@code stack}, so that sockets with SO_RDS_TRANSPORT "capture" bind to it. */
    static CapturingTransport install(CoreStack stack) throws ReflectiveOperationException {
        return AcceptingTransports.install(stack, new CapturingTransport());
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public TransportInstance open(TransportHost host) {
        this.host = host;
        return AcceptingTransports.acceptOnly("the capture transport only accepts", () -> { }, io);
    }

    /** A connection the test drives: it records transmit requests and never does I/O. */
    static final class Conn implements TransportConnection {
        final InetSocketAddress local;
        final InetSocketAddress remote;
        final AtomicInteger transmitRequests = new AtomicInteger();
        ConnectionHandler handler;

        /** The transport's I/O thread: every call into the handler runs there. */
        final TestIoThread io;

        Conn(InetSocketAddress local, InetSocketAddress remote, TestIoThread io) {
            this.local = local;
            this.remote = remote;
            this.io = io;
        }

        /** Bytes from the peer, handed to the core on the I/O thread. */
        void deliver(ByteBuffer bytes) {
            io.run(() -> handler.onBytes(bytes));
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
            transmitRequests.incrementAndGet();
        }

        @Override
        public void close() {
        }

        @Override
        public void abort() {
        }

        @Override
        public void setReadable(boolean readable) {
            // Nothing is read from a capture: the test hands the bytes over itself.
        }

        /** Lets the path write everything it has; returns the bytes, as they would go on the wire. */
        byte[] transmit() {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            io.run(() -> handler.transmit(new FrameSink() {
                @Override
                public boolean isWritable() {
                    return true;
                }

                @Override
                public void write(ByteBuffer header, ByteBuffer payload) {
                    for (ByteBuffer b : new ByteBuffer[] {header, payload}) {
                        byte[] bytes = new byte[b.remaining()];
                        b.duplicate().get(bytes);
                        out.writeBytes(bytes);
                    }
                }

                @Override
                public long streamOffset() {
                    return out.size();
                }
            }));
            return out.toByteArray();
        }
    }

    /** A peer opens a connection to this stack, as a transport listener would offer it. */
    Conn accept(InetSocketAddress local, InetSocketAddress remote) {
        Conn c = new Conn(local, remote, io);
        c.handler = io.get(() -> host.accept(c));
        if (c.handler == null) {
            throw new IllegalStateException("the stack refused the connection from " + remote);
        }
        return c;
    }
}
