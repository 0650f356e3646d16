package org.rds4j.bench.jmh;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantLock;
import org.rds4j.core.spi.ConnectionHandler;
import org.rds4j.core.spi.IoThread;
import org.rds4j.core.spi.FrameSink;
import org.rds4j.core.spi.RdsTransport;
import org.rds4j.core.spi.TransportConnection;
import org.rds4j.core.spi.TransportHost;
import org.rds4j.core.spi.TransportInstance;
import org.rds4j.core.wire.RdsHeader;

/**
 * A transport for microbenchmarks, named {@value #NAME}: no I/O at all, so a benchmark over it measures the core's
 * own cost (queueing, framing, sequence numbers, acknowledgements, delivery) and nothing of a socket or a thread
 * hand-off.
 *
 * <ul>
 *   <li>{@link TransportInstance#connect} completes at once (the core hears {@code onConnected} on its scheduler,
 *       as a transport thread would report it).</li>
 *   <li>{@link TransportConnection#requestTransmit} runs the handler's {@code transmit} synchronously on the calling
 *       thread, into a sink that is always writable, counts the bytes and frames and discards them;
 *       {@code onTransmitted} for everything written follows right after. The instance has no thread of its own:
 *       whichever thread holds its owner token ({@link Instance#ioThread}, taken with a try-lock, never waited for
 *       by the message path) is its I/O thread for that call, so the core's connections have one owner at a time.
 *       If the token is held (the core asks from inside {@code onBytes}, or another thread is in a call), the
 *       request, or a task the core hands over, is remembered and run by the holder before it gives the token
 *       back.</li>
 *   <li>Optionally ({@link Conn#autoAck}), every {@code n} data frames written the sink feeds back, through
 *       {@code onBytes}, an ack-only frame (header only: {@code h_ack} = the highest sequence written, ports 0,
 *       flags 0), as an rds4j or kernel peer would acknowledge them; the core then releases the messages and
 *       the send budget never fills.</li>
 *   <li>Optionally ({@link Instance#handOff}), {@code requestTransmit} only marks the transmit pending, as a real
 *       transport hands it to its I/O thread, and a thread of the benchmark's runs it with
 *       {@link Conn#runTransmits}: the send path across two threads, as in a stack.</li>
 *   <li>Incoming connections are made by the benchmark itself ({@link Instance#acceptFrom}), through
 *       {@link TransportHost#accept} like any transport's listener; the benchmark then feeds bytes with
 *       {@link Conn#feed}.</li>
 * </ul>
 *
 * <p>Its {@link #defaultPriority} is the lowest, so {@code "tcp"} stays every stack's default; sockets choose it
 * with {@code SO_RDS_TRANSPORT} or stacks with {@code defaultTransport("bench-sink")}.
 */
public final class BlackholeTransport implements RdsTransport {
    public static final String NAME = "bench-sink";
    /** The transport port this transport pretends to use at both ends. */
    static final int PORT = 16385;

    private static final Map<String, Instance> INSTANCES = new ConcurrentHashMap<>();

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public int defaultPriority() {
        return Integer.MIN_VALUE;
    }

    @Override
    public TransportInstance open(TransportHost host) {
        Instance i = new Instance(host);
        INSTANCES.put(host.config().name(), i);
        return i;
    }

    /** The instance the stack named {@code stackName} opened (on its first socket bound to this transport). */
    public static Instance instance(String stackName) {
        Instance i = INSTANCES.get(stackName);
        if (i == null) {
            throw new IllegalStateException("no " + NAME + " transport opened by stack " + stackName);
        }
        return i;
    }

    /** One stack's use of the transport. */
    public static final class Instance implements TransportInstance {
        private final TransportHost host;
        private final Map<InetAddress, Conn> outgoing = new ConcurrentHashMap<>();
        /** The owner token: its holder is the I/O thread of every connection of this instance. */
        final ReentrantLock owner = new ReentrantLock();
        /** Tasks the core handed over; run by whoever holds or next takes the token. */
        private final ConcurrentLinkedQueue<Runnable> tasks = new ConcurrentLinkedQueue<>();
        private final IoThread ioThread = new IoThread() {
            @Override
            public boolean inThread() {
                return owner.isHeldByCurrentThread();
            }

            @Override
            public void execute(Runnable task) {
                tasks.add(task);
                runTasks();
            }
        };
        private volatile int autoAckEvery;
        private volatile boolean handOff;

        Instance(TransportHost host) {
            this.host = host;
        }

        @Override
        public IoThread ioThread(InetAddress local, InetAddress peer) {
            return ioThread;
        }

        /** Runs the tasks handed over, if the token is free; a holder runs them before it gives the token back. */
        void runTasks() {
            while (!tasks.isEmpty() && !owner.isHeldByCurrentThread() && owner.tryLock()) {
                try {
                    Runnable t;
                    while ((t = tasks.poll()) != null) {
                        t.run();
                    }
                } finally {
                    owner.unlock();
                }
            }
        }

        /** Makes every outgoing connection (present and future) acknowledge its frames every {@code n} frames. */
        public void autoAck(int n) {
            autoAckEvery = n;
            for (Conn c : outgoing.values()) {
                c.autoAck(n);
            }
        }

        /**
         * With {@code true}, transmits the core asks for on every outgoing connection (present and future) wait for
         * {@link Conn#runTransmits} on another thread instead of running on the asking one.
         */
        public void handOff(boolean on) {
            handOff = on;
            for (Conn c : outgoing.values()) {
                c.handOff = on;
            }
        }

        /** The outgoing connection to {@code peer}, or null before the core opened it. */
        public Conn outgoing(InetAddress peer) {
            return outgoing.get(peer);
        }

        /**
         * A peer at {@code peer} connects to {@code local}: offers the connection to the core as a listener would.
         *
         * @throws IllegalStateException the core refused it (by the address rule, {@code peer} must be the smaller)
         */
        public Conn acceptFrom(InetAddress peer, InetAddress local) {
            Conn c = new Conn(new InetSocketAddress(local, PORT), new InetSocketAddress(peer, PORT), this);
            ConnectionHandler h;
            c.lock.lock();
            try {
                h = host.accept(c);
            } finally {
                c.lock.unlock();
            }
            if (h == null) {
                throw new IllegalStateException("the core refused a connection from " + peer + " to " + local);
            }
            c.handler = h;
            c.runPending();
            return c;
        }

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

        @Override
        public void connect(InetAddress local, InetAddress peer, int pathIndex, ConnectionHandler handler) {
            Conn c = new Conn(new InetSocketAddress(local, PORT), new InetSocketAddress(peer, PORT), this);
            c.autoAck(autoAckEvery);
            c.handOff = handOff;
            outgoing.put(peer, c);
            host.scheduler().execute(() -> {
                c.lock.lock();
                c.handler = handler;    // transmits asked for before this wait for it
                try {
                    handler.onConnected(c);
                } finally {
                    c.lock.unlock();
                }
                c.runPending();
            });
        }

        @Override
        public void close() {
            INSTANCES.remove(host.config().name(), this);
            for (Conn c : outgoing.values()) {
                c.close();
            }
            outgoing.clear();
        }
    }

    /** One in-memory connection: the core's writes go to a counting sink; bytes come in from the benchmark. */
    public static final class Conn implements TransportConnection, FrameSink {
        private final InetSocketAddress local;
        private final InetSocketAddress remote;
        /** Held during every handler call: the SPI's one-call-at-a-time rule. */
        /** The instance's owner token. */
        final ReentrantLock lock;
        private final Instance instance;
        private final AtomicBoolean transmitPending = new AtomicBoolean();
        private final AtomicBoolean closed = new AtomicBoolean();
        volatile ConnectionHandler handler;
        /** Transmits wait for {@link #runTransmits} instead of running on the thread that asks. */
        volatile boolean handOff;

        // Under lock.
        private long written;
        private long frames;
        private long highestSequence;
        private int framesSinceAck;
        private int autoAckEvery;
        private final ByteBuffer ackFrame = ByteBuffer.allocate(RdsHeader.SIZE);
        private final RdsHeader ackHeader = new RdsHeader();

        Conn(InetSocketAddress local, InetSocketAddress remote, Instance instance) {
            this.local = local;
            this.remote = remote;
            this.instance = instance;
            this.lock = instance.owner;
        }

        void autoAck(int n) {
            lock.lock();
            try {
                autoAckEvery = n;
            } finally {
                lock.unlock();
            }
        }

        @Override
        public InetSocketAddress localAddress() {
            return local;
        }

        @Override
        public InetSocketAddress remoteAddress() {
            return remote;
        }

        /** Bytes the core has written to this connection. */
        public long bytesWritten() {
            lock.lock();
            try {
                return written;
            } finally {
                lock.unlock();
            }
        }

        /** Frames the core has written to this connection. */
        public long framesWritten() {
            lock.lock();
            try {
                return frames;
            } finally {
                lock.unlock();
            }
        }

        /**
         * Delivers {@code data} (whole frames or not, in stream order) to the core as bytes from the peer, on the
         * calling thread; transmits the core asks for meanwhile run right after.
         */
        public void feed(ByteBuffer data) {
            ConnectionHandler h = handler;
            if (h == null || closed.get()) {
                throw new IllegalStateException("connection not established or closed");
            }
            lock.lock();
            try {
                h.onBytes(data);
            } finally {
                lock.unlock();
            }
            runPending();
        }

        @Override
        public void requestTransmit() {
            if (handOff) {
                if (!transmitPending.get()) { // already asked: one volatile read, as the real transports do
                    transmitPending.set(true);
                }
                return;
            }
            transmitPending.set(true);
            runPending();
        }

        /**
         * Runs the transmits asked for since the last call (and the acknowledgements they earn), on the calling
         * thread: a pretend I/O thread's poll.
         *
         * @return whether there was anything to run
         */
        public boolean runTransmits() {
            if (!transmitPending.get()) {
                return false;
            }
            runPending();
            return true;
        }

        /** Runs requested transmits (and the acks they earn) unless a handler call is already under way. */
        void runPending() {
            runTransmitsPending();
            instance.runTasks();
        }

        private void runTransmitsPending() {
            while (transmitPending.get() && !lock.isHeldByCurrentThread() && lock.tryLock()) {
                try {
                    ConnectionHandler h = handler;
                    if (h == null || closed.get()) {
                        return;
                    }
                    while (transmitPending.getAndSet(false)) {
                        h.transmit(this);
                        h.onTransmitted(written);
                        if (autoAckEvery > 0 && framesSinceAck >= autoAckEvery) {
                            framesSinceAck = 0;
                            ackFrame.clear();
                            ackHeader.clear().ack(highestSequence).encode(ackFrame);
                            ackFrame.flip();
                            h.onBytes(ackFrame);
                        }
                    }
                } finally {
                    lock.unlock();
                }
            }
        }

        @Override
        public boolean isWritable() {
            return true;
        }

        @Override
        public void write(ByteBuffer header, ByteBuffer payload) {
            int n = header.remaining() + payload.remaining();
            if (header.remaining() >= RdsHeader.SIZE) {
                long seq = header.getLong(header.position());
                if (header.order() != ByteOrder.BIG_ENDIAN) {
                    seq = Long.reverseBytes(seq);
                }
                if (Long.compareUnsigned(seq, highestSequence) > 0) {
                    highestSequence = seq;
                }
            }
            written += n;
            frames++;
            framesSinceAck++;
        }

        @Override
        public long streamOffset() {
            return written;
        }

        @Override
        public void close() {
            closeWith(null);
        }

        @Override
        public void abort() {
            closeWith(null);
        }

        @Override
        public void setReadable(boolean readable) {
            // The pretend peer only acknowledges, a few bytes per 16 frames: no bound is ever reached.
        }

        private void closeWith(Throwable cause) {
            if (!closed.compareAndSet(false, true)) {
                return;
            }
            ConnectionHandler h = handler;
            if (h != null) {
                lock.lock();
                try {
                    h.onClosed(cause);
                } finally {
                    lock.unlock();
                }
                instance.runTasks();
            }
        }

        @Override
        public String toString() {
            return "BlackholeConn[" + local + " -> " + remote + "]";
        }
    }
}
