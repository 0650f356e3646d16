package org.rds4j.core.stack;

import java.io.ByteArrayOutputStream;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.rds4j.core.spi.ConnectionHandler;
import org.rds4j.core.spi.FrameSink;
import org.rds4j.core.spi.RdsTransport;
import org.rds4j.core.spi.ReadTarget;
import org.rds4j.core.spi.TransportConnection;
import org.rds4j.core.spi.TransportHost;
import org.rds4j.core.spi.TransportInstance;

/**
 * A transport for fuzzing one {@link CoreStack} through the SPI, with no I/O and no thread: the fuzz test is the
 * peer and the transport's I/O thread at once. It offers incoming connections ({@link #accept}), feeds them bytes,
 * runs the transmit passes the core asks for into a sink that keeps the bytes, and reports {@code onClosed} after
 * the core closed or aborted a connection, as a real transport does, but only when the test calls {@link Conn#pump}:
 * never from inside a handler call, so the SPI's one-call-at-a-time rule holds. Outgoing connects fail at once (the
 * fuzzed peer has the smaller address and always calls us).
 *
 * <p>Installed into the stack's transport table by reflection, as {@link CapturingTransport} is: rds-core's tests
 * have no transport on the service path.
 */
final class FuzzTransport implements RdsTransport {
    static final String NAME = "fuzz";

    private TransportHost host;
    /** The I/O thread every call into the core runs on. */
    final TestIoThread io = new TestIoThread("fuzz-io");
    final List<Conn> connections = new ArrayList<>();
    final AtomicInteger connectCalls = new AtomicInteger();

    static FuzzTransport install(CoreStack stack) throws ReflectiveOperationException {
        return AcceptingTransports.install(stack, new FuzzTransport());
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public TransportInstance open(TransportHost host) {
        this.host = host;
        return AcceptingTransports.acceptOnly("the fuzzed peer only connects to us", connectCalls::incrementAndGet, io);
    }

    /** The peer opens a connection; null if the core refused it (the transport would reset it). */
    Conn accept(InetSocketAddress local, InetSocketAddress remote) {
        Conn c = new Conn(local, remote, io);
        c.handler = io.get(() -> host.accept(c));
        if (c.handler == null) {
            return null;
        }
        connections.add(c);
        return c;
    }

    /** One connection. Written by the core from any thread (requests, close); driven by the test's thread. */
    static final class Conn implements TransportConnection {
        final InetSocketAddress local;
        final InetSocketAddress remote;
        ConnectionHandler handler;
        final AtomicBoolean transmitRequested = new AtomicBoolean();
        final AtomicBoolean closedByCore = new AtomicBoolean();
        /** onClosed was delivered: nothing more may be called. */
        boolean finished;
        /** Every byte the core wrote, in order. */
        final ByteArrayOutputStream written = new ByteArrayOutputStream();

        /** The transport's I/O thread: every call into the handler runs there. */
        final TestIoThread io;

        Conn(InetSocketAddress local, InetSocketAddress remote, TestIoThread io) {
            this.local = local;
            this.remote = remote;
            this.io = io;
        }

        /** Open from the transport's point of view: bytes may still be delivered. */
        boolean open() {
            return !finished && !closedByCore.get();
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
            transmitRequested.set(true);
        }

        @Override
        public void close() {
            closedByCore.set(true);
        }

        @Override
        public void abort() {
            closedByCore.set(true);
        }

        /** Whether the core wants bytes: a stopped connection is fed nothing, as TCP would hold them back. */
        private volatile boolean readable = true;

        /** Whether the core reads this connection now (false while it waits aside for a path). */
        boolean readable() {
            return readable;
        }

        @Override
        public void setReadable(boolean r) {
            readable = r;
        }

        /**
         * Bytes from the peer, read as a socket transport reads them when the core offers a read target: each read
         * goes straight into the target's memory, at most {@link ReadTarget#bytes()} of it, and what no target
         * takes goes through {@code onBytes} in one read. Ignored once the connection is closed.
         *
         * @return the bytes that went in place
         */
        int feedInPlace(ByteBuffer bytes) {
            return io.get(() -> feedInPlaceOnIo(bytes));
        }

        private int feedInPlaceOnIo(ByteBuffer bytes) {
            int inPlace = 0;
            while (open() && readable && bytes.hasRemaining()) {
                ReadTarget t = handler.readTarget();
                if (t == null) {
                    handler.onBytes(bytes);
                    break;
                }
                int n = Math.min(bytes.remaining(), t.bytes());
                endReadInPlaceOnIo(t, bytes, n);
                inPlace += n;
            }
            return inPlace;
        }

        /**
         * The first half of a read in place: the target the core offers, which is the transport's until
         * {@link #endReadInPlace}.
         *
         * @return the target, or {@code null}
         */
        ReadTarget beginReadInPlace() {
            return io.get(handler::readTarget);
        }

        /** The read into {@code t} brings the next {@code n} bytes of {@code from}. */
        void endReadInPlace(ReadTarget t, ByteBuffer from, int n) {
            io.run(() -> endReadInPlaceOnIo(t, from, n));
        }

        private void endReadInPlaceOnIo(ReadTarget t, ByteBuffer from, int n) {
            ByteBuffer m = t.memory();
            m.put(m.position(), from, from.position(), n);
            from.position(from.position() + n);
            handler.onBytesReadInPlace(n);
        }

        /** Bytes from the peer; ignored once the connection is closed, as TCP would after a reset. */
        void feed(ByteBuffer bytes) {
            if (open() && readable) {
                io.run(() -> handler.onBytes(bytes));
            }
        }

        /**
         * What the transport's thread would do next: report a close the core asked for, or run one requested
         * transmit pass into a sink that takes {@code frames} frames, then report what left.
         */
        void pump(int frames) {
            io.run(() -> pumpOnIo(frames));
        }

        private void pumpOnIo(int frames) {
            if (finished) {
                return;
            }
            if (closedByCore.get()) {
                finish(null);
                return;
            }
            if (transmitRequested.getAndSet(false)) {
                int[] left = {frames};
                handler.transmit(new FrameSink() {
                    @Override
                    public boolean isWritable() {
                        return left[0] > 0;
                    }

                    @Override
                    public void write(ByteBuffer header, ByteBuffer payload) {
                        left[0]--;
                        for (ByteBuffer b : new ByteBuffer[] {header, payload}) {
                            byte[] bytes = new byte[b.remaining()];
                            b.duplicate().get(bytes);
                            written.writeBytes(bytes);
                        }
                    }

                    @Override
                    public long streamOffset() {
                        return written.size();
                    }
                });
                handler.onTransmitted(written.size());
                if (left[0] <= 0) {
                    transmitRequested.set(true);     // full: the transport calls again once it drained
                }
            }
        }

        /** The connection ends: by the peer ({@code cause} may be null for an orderly close) or after the core's. */
        void finish(Throwable cause) {
            io.run(() -> {
                if (!finished) {
                    finished = true;
                    handler.onClosed(cause);
                }
            });
        }
    }
}
