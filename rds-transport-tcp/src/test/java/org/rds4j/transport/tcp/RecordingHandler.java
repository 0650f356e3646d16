package org.rds4j.transport.tcp;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.rds4j.core.spi.ConnectionHandler;
import org.rds4j.core.spi.FrameSink;
import org.rds4j.core.spi.ReadTarget;
import org.rds4j.core.spi.TransportConnection;
import org.rds4j.core.wire.FrameDecoder;
import org.rds4j.core.wire.RdsHeader;
import org.rds4j.core.wire.RdsProtocolException;

/**
 * A stand-in for the core's side of one connection: records every call and checks the transport's promises (one
 * thread, an I/O thread of the right stack; nothing after onClosed; offsets never decrease; buffer positions kept).
 */
final class RecordingHandler implements ConnectionHandler {
    final String threadPrefix;
    final CompletableFuture<TransportConnection> connected = new CompletableFuture<>();
    final CompletableFuture<Throwable> connectFailed = new CompletableFuture<>();
    final CompletableFuture<Throwable> closed = new CompletableFuture<>();
    final AtomicInteger closedCalls = new AtomicInteger();
    final AtomicInteger transmitCalls = new AtomicInteger();
    final AtomicInteger unwritableStops = new AtomicInteger();
    final AtomicInteger onBytesCalls = new AtomicInteger();
    final List<String> violations = Collections.synchronizedList(new ArrayList<>());
    /** Frames to send, each {header, payload}. */
    final Queue<ByteBuffer[]> outbox = new ConcurrentLinkedQueue<>();
    /** If not empty: how many frames each transmit call may write (then it asks for the next call itself). */
    final Queue<Integer> framesPerCall = new ConcurrentLinkedQueue<>();
    volatile CountDownLatch holdFirstRead;
    volatile TransportConnection connection;
    private final ByteArrayOutputStream received = new ByteArrayOutputStream();
    private long transmitted = -1;
    private long written;
    private Thread ioThread;
    /** Stream ranges {start, length} the handler wants read in place, in order ({@link #readInPlace}). */
    private final Queue<long[]> inPlaceRanges = new ConcurrentLinkedQueue<>();
    private InPlace inPlace;
    private InPlace reading;
    final AtomicInteger inPlaceReads = new AtomicInteger();
    final AtomicInteger inPlaceBytes = new AtomicInteger();
    final AtomicInteger attachCalls = new AtomicInteger();
    final List<InPlace> inPlaceDone = Collections.synchronizedList(new ArrayList<>());

    RecordingHandler(String stackName) {
        this.threadPrefix = "rds4j-" + stackName + "-tcp-";
    }

    /** The thread of the handler's calls so far, {@code null} before the first. */
    synchronized Thread ioThread() {
        return ioThread;
    }

    private void check(String call) {
        Thread t = Thread.currentThread();
        if (!t.getName().startsWith(threadPrefix)) {
            violations.add(call + " on thread " + t.getName());
        }
        if (ioThread == null) {
            ioThread = t;
        } else if (ioThread != t) {
            violations.add(call + " on " + t.getName() + ", earlier calls on " + ioThread.getName());
        }
        if (closedCalls.get() > 0) {
            violations.add(call + " after onClosed");
        }
    }

    @Override
    public void onConnected(TransportConnection c) {
        check("onConnected");
        connection = c;
        connected.complete(c);
    }

    @Override
    public void onConnectFailed(Throwable cause) {
        connectFailed.complete(cause);
    }

    /**
     * Asks for the {@code length} stream bytes from offset {@code start} to be read into a direct buffer of the
     * handler's, as the core asks for the rest of a large payload once its header is in; ranges in stream order,
     * before they arrive. Bytes of the range a read into the transport's own buffer took come through onBytes.
     */
    void readInPlace(long start, int length) {
        inPlaceRanges.add(new long[] {start, length});
    }

    /** One range read in place: its own direct buffer, followed by canary bytes no read may touch. */
    static final class InPlace implements ReadTarget {
        static final int CANARY = 64;
        final long start;
        final int length;
        final ByteBuffer memory;
        private final AtomicInteger attachCalls;
        private Object attachment;

        InPlace(long start, int length, AtomicInteger attachCalls) {
            this.start = start;
            this.length = length;
            this.attachCalls = attachCalls;
            memory = ByteBuffer.allocateDirect(7 + length + CANARY).position(7);   // not at 0: positions count
            for (int i = 7 + length; i < memory.capacity(); i++) {
                memory.put(i, (byte) 0x5A);
            }
        }

        boolean canaryIntact() {
            for (int i = 7 + length; i < memory.capacity(); i++) {
                if (memory.get(i) != 0x5A) {
                    return false;
                }
            }
            return true;
        }

        @Override
        public ByteBuffer memory() {
            return memory;
        }

        @Override
        public int bytes() {
            return 7 + length - memory.position();
        }

        @Override
        public Object attachment() {
            return attachment;
        }

        @Override
        public void attach(Object a) {
            attachCalls.incrementAndGet();
            attachment = a;
        }
    }

    @Override
    public ReadTarget readTarget() {
        check("readTarget");
        if (reading != null) {
            violations.add("readTarget again before onBytesReadInPlace");
        }
        long at;
        synchronized (this) {
            at = received.size();
        }
        if (inPlace == null) {
            long[] r = inPlaceRanges.peek();
            if (r == null || at < r[0]) {
                return null;
            }
            inPlaceRanges.poll();
            long end = r[0] + r[1];
            if (at >= end) {
                return null;                        // a read into the transport's own buffer took all of it
            }
            inPlace = new InPlace(at, (int) (end - at), attachCalls);   // what a read of its own left
        }
        reading = inPlace;
        return inPlace;
    }

    @Override
    public void onBytesReadInPlace(int n) {
        check("onBytesReadInPlace");
        InPlace t = reading;
        reading = null;
        if (t == null) {
            violations.add("onBytesReadInPlace(" + n + ") without a read target");
            return;
        }
        if (n < 0 || n > t.bytes()) {
            violations.add("read " + n + " bytes in place where " + t.bytes() + " were asked for");
            return;
        }
        inPlaceReads.incrementAndGet();
        inPlaceBytes.addAndGet(n);
        int from = t.memory.position();
        synchronized (this) {
            for (int i = 0; i < n; i++) {
                received.write(t.memory.get(from + i));
            }
            notifyAll();
        }
        t.memory.position(from + n);
        if (t.bytes() == 0) {
            inPlaceDone.add(t);
            inPlace = null;
        }
    }

    @Override
    public void onBytes(ByteBuffer data) {
        check("onBytes");
        if (reading != null) {
            violations.add("onBytes while a read in place was under way");
        }
        onBytesCalls.incrementAndGet();
        CountDownLatch hold = holdFirstRead;
        if (hold != null) {
            holdFirstRead = null;
            try {
                if (!hold.await(20, TimeUnit.SECONDS)) {
                    violations.add("first read held too long");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        synchronized (this) {
            while (data.hasRemaining()) {
                received.write(data.get());
            }
            notifyAll();
        }
    }

    @Override
    public void transmit(FrameSink sink) {
        check("transmit");
        transmitCalls.incrementAndGet();
        Integer limit = framesPerCall.poll();
        int budget = limit == null ? Integer.MAX_VALUE : limit;
        if (sink.streamOffset() != written) {
            violations.add("streamOffset " + sink.streamOffset() + " != bytes written " + written);
        }
        ByteBuffer[] f;
        while (budget > 0 && sink.isWritable() && (f = outbox.poll()) != null) {
            int hp = f[0].position();
            int pp = f[1].position();
            int hl = f[0].limit();
            int pl = f[1].limit();
            sink.write(f[0], f[1]);
            if (f[0].position() != hp || f[1].position() != pp || f[0].limit() != hl || f[1].limit() != pl) {
                violations.add("write moved a buffer's position or limit");
            }
            written += f[0].remaining() + f[1].remaining();
            budget--;
        }
        if (sink.streamOffset() != written) {
            violations.add("streamOffset " + sink.streamOffset() + " != bytes written " + written);
        }
        if (!sink.isWritable() && !outbox.isEmpty()) {
            unwritableStops.incrementAndGet();
        } else if (limit != null && !outbox.isEmpty()) {
            connection.requestTransmit();
        }
    }

    @Override
    public synchronized void onTransmitted(long streamOffset) {
        check("onTransmitted");
        if (streamOffset < transmitted) {
            violations.add("onTransmitted went back from " + transmitted + " to " + streamOffset);
        }
        if (streamOffset > written) {
            violations.add("onTransmitted " + streamOffset + " beyond the " + written + " bytes written");
        }
        transmitted = streamOffset;
        notifyAll();
    }

    @Override
    public void onClosed(Throwable cause) {
        check("onClosed");
        if (closedCalls.incrementAndGet() > 1) {
            violations.add("onClosed called again");
        }
        closed.complete(cause);
    }

    synchronized byte[] received() {
        return received.toByteArray();
    }

    synchronized long receivedCount() {
        return received.size();
    }

    synchronized long transmitted() {
        return transmitted;
    }

    /** Waits until at least {@code n} bytes arrived; returns how many did. */
    synchronized long awaitReceived(long n, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (received.size() < n) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                break;
            }
            TimeUnit.NANOSECONDS.timedWait(this, left);
        }
        return received.size();
    }

    /** Waits until onTransmitted reported at least {@code n}; returns the last offset reported. */
    synchronized long awaitTransmitted(long n, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (transmitted < n) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                break;
            }
            TimeUnit.NANOSECONDS.timedWait(this, left);
        }
        return transmitted;
    }

    // ---- frames ----

    /** One frame: a 48-byte header made with {@link RdsHeader} and a payload in a buffer of the given kind. */
    static ByteBuffer[] frame(long seq, byte[] payload, int kind) {
        RdsHeader h = new RdsHeader().sequence(seq).length(payload.length).sourcePort(4000 + (int) (seq % 1000))
                .destinationPort(5000).flags(seq % 7 == 0 ? RdsHeader.FLAG_RETRANSMITTED : 0);
        ByteBuffer header = ByteBuffer.allocate(RdsHeader.SIZE);
        h.encode(header);
        header.flip();
        ByteBuffer p;
        switch (kind % 4) {
            case 0:
                p = ByteBuffer.wrap(payload);
                break;
            case 1: {   // direct, not starting at 0
                ByteBuffer d = ByteBuffer.allocateDirect(payload.length + 10);
                d.position(3);
                d.put(payload);
                d.position(3).limit(3 + payload.length);
                p = d;
                break;
            }
            case 2:
                p = ByteBuffer.wrap(payload).asReadOnlyBuffer();
                break;
            default: {  // heap slice with an array offset
                byte[] big = new byte[payload.length + 20];
                System.arraycopy(payload, 0, big, 7, payload.length);
                p = ByteBuffer.wrap(big, 5, payload.length + 4).slice();
                p.position(2).limit(2 + payload.length);
                break;
            }
        }
        return new ByteBuffer[] {header, p};
    }

    static byte[] payload(long seed, int len) {
        byte[] b = new byte[len];
        long x = seed * 0x9E3779B97F4A7C15L + 1;
        for (int i = 0; i < len; i++) {
            x ^= x << 13;
            x ^= x >>> 7;
            x ^= x << 17;
            b[i] = (byte) x;
        }
        return b;
    }

    static void append(ByteArrayOutputStream out, ByteBuffer[] frame) {
        for (ByteBuffer b : frame) {
            ByteBuffer d = b.duplicate();
            byte[] a = new byte[d.remaining()];
            d.get(a);
            out.write(a, 0, a.length);
        }
    }

    /** A decoded message. */
    record Message(RdsHeader header, byte[] payload) {
    }

    static List<Message> decode(byte[] stream) throws RdsProtocolException {
        List<Message> out = new ArrayList<>();
        FrameDecoder d = new FrameDecoder(1 << 20);
        d.decode(ByteBuffer.wrap(stream), new FrameDecoder.Listener() {
            @Override
            public ByteBuffer payloadBuffer(RdsHeader header) {
                return ByteBuffer.allocate((int) header.length());
            }

            @Override
            public void onMessage(RdsHeader header, ByteBuffer payload) {
                out.add(new Message(new RdsHeader().set(header), payload.array()));
            }
        });
        if (d.inMessage()) {
            throw new AssertionError("the stream ends inside a message");
        }
        return out;
    }
}
