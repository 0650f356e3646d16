package org.rds4j.bench.jmh;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.rds4j.RdsMessageInfo;
import org.rds4j.RdsSocket;
import org.rds4j.RdsSocketOptions;
import org.rds4j.RdsStack;
import org.rds4j.RdsStackConfig;
import org.rds4j.core.wire.RdsHeader;

/**
 * The receive path through the core, with no I/O: a 64 KiB chunk of back-to-back data frames (as one TCP read
 * would bring) is handed to the connection's {@code onBytes} on the benchmark thread, and the receiving socket is
 * then drained with {@link RdsSocket#receive(ByteBuffer, RdsMessageInfo, int)} and {@code MSG_DONTWAIT} into one
 * reused buffer. Scores are per message ({@link OperationsPerInvocation}): {@code deliver64} has
 * {@value #FRAMES_64} frames of 64 bytes per chunk, {@code deliver1k} {@value #FRAMES_1K} of 1 KiB.
 *
 * <p>The connection is an incoming one, offered to the core through {@code TransportHost.accept} by
 * {@link BlackholeTransport} as a listener would; the pretend peer has the smaller address, so the core keeps it
 * (the kernel's rule). The chunk is encoded once; before each feed the sequence numbers of its frames are
 * patched to continue from the last chunk's, so the core never sees a duplicate. Whatever the core transmits
 * back (acknowledgements, congestion map updates) goes to the sink and is discarded; a delayed acknowledgement
 * may be transmitted from the stack's scheduler thread and then contends briefly for the connection.
 *
 * <p>Included: frame parsing, sequence and acknowledgement bookkeeping, the bind-table lookup, the receive queue,
 * congestion accounting, the public receive call and its copy out. Excluded: reading from a socket, system calls,
 * thread hand-offs, the sender.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class ReceiveDeliverBenchmark {
    static final int CHUNK = 64 * 1024;
    static final int FRAMES_64 = CHUNK / (RdsHeader.SIZE + 64);
    static final int FRAMES_1K = CHUNK / (RdsHeader.SIZE + 1024);
    private static final int PEER_PORT = 4000;

    private RdsStack stack;
    private RdsSocket socket;
    private BlackholeTransport.Conn conn;
    private ByteBuffer chunk64;
    private ByteBuffer chunk1k;
    private final ByteBuffer received = ByteBuffer.allocateDirect(1024);
    private final RdsMessageInfo info = new RdsMessageInfo();
    private long nextSequence = 1;

    @Setup(Level.Trial)
    public void setUp() throws IOException {
        // The pretend peer is the smaller address: the core accepts connections only from smaller addresses.
        InetAddress peer = InetAddress.getByName("10.252.0.1");
        InetAddress local = InetAddress.getByName("10.252.0.2");
        String name = "jmh-deliver";
        stack = RdsStack.create(RdsStackConfig.builder().name(name).address(local).build());
        socket = stack.openSocket();
        socket.setOption(RdsSocketOptions.SO_RDS_TRANSPORT, BlackholeTransport.NAME);
        socket.bind(new InetSocketAddress(local, 0));
        socket.configureBlocking(false);
        int port = socket.localAddress().getPort();
        conn = BlackholeTransport.instance(name).acceptFrom(peer, local);
        chunk64 = encode(FRAMES_64, 64, port);
        chunk1k = encode(FRAMES_1K, 1024, port);
    }

    /** {@code frames} data frames of {@code size} bytes to {@code port}; sequence numbers are patched per feed. */
    private static ByteBuffer encode(int frames, int size, int port) {
        ByteBuffer b = ByteBuffer.allocate(frames * (RdsHeader.SIZE + size));
        RdsHeader h = new RdsHeader();
        for (int i = 0; i < frames; i++) {
            h.clear().length(size).sourcePort(PEER_PORT).destinationPort(port).encode(b);
            for (int j = 0; j < size; j++) {
                b.put((byte) j);
            }
        }
        return b.flip();
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        socket.close();
        stack.close();
    }

    private int feedAndDrain(ByteBuffer chunk, int frames, int size) throws IOException {
        int stride = RdsHeader.SIZE + size;
        for (int i = 0; i < frames; i++) {
            chunk.putLong(i * stride, nextSequence++);    // h_sequence, big-endian (the buffer's order)
        }
        chunk.position(0);
        conn.feed(chunk);
        int bytes = 0;
        for (int i = 0; i < frames; i++) {
            received.clear();
            bytes += socket.receive(received, info, RdsSocket.MSG_DONTWAIT);
        }
        return bytes;
    }

    @Benchmark
    @OperationsPerInvocation(FRAMES_64)
    public int deliver64() throws IOException {
        return feedAndDrain(chunk64, FRAMES_64, 64);
    }

    @Benchmark
    @OperationsPerInvocation(FRAMES_1K)
    public int deliver1k() throws IOException {
        return feedAndDrain(chunk1k, FRAMES_1K, 1024);
    }
}
