package org.rds4j.bench.jmh;

import java.io.IOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Group;
import org.openjdk.jmh.annotations.GroupThreads;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.rds4j.EagainException;
import org.rds4j.RdsMessageInfo;
import org.rds4j.RdsSocket;
import org.rds4j.RdsSocketOptions;
import org.rds4j.RdsStack;
import org.rds4j.RdsStackConfig;
import org.rds4j.core.wire.RdsHeader;

/**
 * The receive path across two threads, with no I/O: {@link ReceiveDeliverBenchmark}'s 64 KiB chunks of 64-byte
 * frames, fed to the connection by one thread of the group (a pretend I/O thread) while the other reads them one at
 * a time with {@link RdsSocket#receive(ByteBuffer, RdsMessageInfo, int)} and {@code MSG_DONTWAIT}, as a stack's I/O
 * thread and a reader do. The feeder stays at most two chunks ahead of the reader (it learns how far the reader got
 * every {@value #PUBLISH_EVERY} messages), so the socket's receive budget never fills.
 *
 * <p>What it measures that the single-threaded benchmark cannot: what the receive queue, the arrival pool and each
 * arrival cost when they cross cores. The score to read is {@code handOff:messages}: messages read per microsecond
 * ({@code handOff:empty} counts the receives that found nothing and returned early through EAGAIN). It needs two
 * cores to mean anything.
 */
@State(Scope.Group)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class ReceiveHandOffBenchmark {
    static final int FRAMES = ReceiveDeliverBenchmark.FRAMES_64;
    static final int PUBLISH_EVERY = 64;
    private static final int PEER_PORT = 4000;
    private static final VarHandle READ;

    static {
        try {
            READ = MethodHandles.lookup().findVarHandle(ReceiveHandOffBenchmark.class, "read", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** The reader's counts, reported beside the scores. */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.OPERATIONS)
    public static class ReaderCounts {
        public long messages;
        public long empty;
    }

    private RdsStack stack;
    private RdsSocket socket;
    private BlackholeTransport.Conn conn;
    private ByteBuffer chunk;
    private long nextSequence = 1;                          // feeder's
    private final ByteBuffer received = ByteBuffer.allocateDirect(64);   // reader's
    private final RdsMessageInfo info = new RdsMessageInfo();
    private long readByReader;                              // reader's own count
    @SuppressWarnings("unused") private volatile long read; // what the reader published

    @Setup(Level.Trial)
    public void setUp() throws IOException {
        InetAddress peer = InetAddress.getByName("10.252.0.3");
        InetAddress local = InetAddress.getByName("10.252.0.4");
        String name = "jmh-receive-handoff";
        stack = RdsStack.create(RdsStackConfig.builder().name(name).address(local).build());
        socket = stack.openSocket();
        socket.setOption(RdsSocketOptions.SO_RDS_TRANSPORT, BlackholeTransport.NAME);
        socket.setOption(RdsSocketOptions.SO_RCVBUF, 4 * FRAMES * (RdsHeader.SIZE + 64) * 4);
        socket.bind(new InetSocketAddress(local, 0));
        socket.configureBlocking(false);
        conn = BlackholeTransport.instance(name).acceptFrom(peer, local);
        int port = socket.localAddress().getPort();
        chunk = ByteBuffer.allocate(FRAMES * (RdsHeader.SIZE + 64));
        RdsHeader h = new RdsHeader();
        for (int i = 0; i < FRAMES; i++) {
            h.clear().length(64).sourcePort(PEER_PORT).destinationPort(port).encode(chunk);
            for (int j = 0; j < 64; j++) {
                chunk.put((byte) j);
            }
        }
        chunk.flip();
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        socket.close();
        stack.close();
    }

    /** The pretend I/O thread: one chunk of {@value #FRAMES} frames if the reader is close enough behind. */
    @Benchmark
    @Group("handOff")
    @GroupThreads(1)
    public boolean feed() {
        long fed = nextSequence - 1;
        if (fed - (long) READ.getAcquire(this) > FRAMES + PUBLISH_EVERY) {
            Thread.onSpinWait();
            return false;
        }
        int stride = RdsHeader.SIZE + 64;
        for (int i = 0; i < FRAMES; i++) {
            chunk.putLong(i * stride, nextSequence++);      // h_sequence, big-endian
        }
        chunk.position(0);
        conn.feed(chunk);
        return true;
    }

    /** The reader: one message, or nothing if none is queued. */
    @Benchmark
    @Group("handOff")
    @GroupThreads(1)
    public int receive(ReaderCounts counts) throws IOException {
        received.clear();
        try {
            int n = socket.receive(received, info, RdsSocket.MSG_DONTWAIT);
            counts.messages++;
            if ((++readByReader & (PUBLISH_EVERY - 1)) == 0) {
                READ.setRelease(this, readByReader);
            }
            return n;
        } catch (EagainException e) {
            counts.empty++;
            READ.setRelease(this, readByReader);
            return -1;
        }
    }
}
