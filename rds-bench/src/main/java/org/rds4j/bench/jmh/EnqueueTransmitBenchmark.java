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
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.rds4j.RdsSocket;
import org.rds4j.RdsSocketOptions;
import org.rds4j.RdsStack;
import org.rds4j.RdsStackConfig;

/**
 * The send path through the core, with no I/O: one op is one {@link RdsSocket#send} of a {@code size}-byte message
 * from a bound socket to a peer, through the send queue and the transmit pass (sequence number, header encode) to
 * the frame written into {@link BlackholeTransport}'s sink, which counts and discards it. The transmit runs
 * synchronously on the benchmark thread, inside the send call.
 *
 * <p>Acknowledgements: there is no peer, so the transport plays one. Every {@value #ACK_EVERY} frames its sink feeds
 * the connection an ack-only frame ({@code h_ack} = the highest sequence written, ports 0, flags 0) through
 * {@code onBytes}, as an rds4j or kernel peer acknowledges what it received, and the core releases the messages
 * it holds for retransmission. That release is part of the measured cost (amortized over {@value #ACK_EVERY}
 * sends); the send budget ({@code SO_SNDBUF}) therefore never fills and the socket never waits. The socket is
 * non-blocking so that, should acknowledgements ever stop working, the benchmark fails instead of hanging.
 *
 * <p>Included: the public send call, the socket's send budget, the connection's queue, framing, the sink write,
 * acknowledgement processing. Excluded: any copy to a socket or kernel, system calls, thread hand-offs, the
 * receiver.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class EnqueueTransmitBenchmark {
    /** Frames between two acknowledgements from the pretend peer. */
    static final int ACK_EVERY = 16;

    @Param({"64", "1024"})
    public int size;

    private RdsStack stack;
    private RdsSocket socket;
    private InetSocketAddress destination;
    private BlackholeTransport.Conn conn;
    private ByteBuffer message;
    private long framesAtStart;
    private long sends;

    @Setup(Level.Trial)
    public void setUp() throws IOException, InterruptedException {
        // The smaller address connects (the kernel's rule), so the local one is the smaller here.
        InetAddress local = InetAddress.getByName("10.251.0.1");
        InetAddress peer = InetAddress.getByName("10.251.0.2");
        String name = "jmh-enqueue-" + size;
        stack = RdsStack.create(RdsStackConfig.builder().name(name).address(local).build());
        socket = stack.openSocket();
        socket.setOption(RdsSocketOptions.SO_RDS_TRANSPORT, BlackholeTransport.NAME);
        socket.bind(new InetSocketAddress(local, 0));
        socket.configureBlocking(false);
        BlackholeTransport.Instance transport = BlackholeTransport.instance(name);
        transport.autoAck(ACK_EVERY);
        destination = new InetSocketAddress(peer, 4000);
        message = ByteBuffer.allocateDirect(size);
        // The first send opens the connection; wait until it is up and the message has gone out.
        socket.send(message.clear(), destination);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while ((conn = transport.outgoing(peer)) == null || conn.framesWritten() == 0) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("the connection never came up");
            }
            Thread.sleep(1);
        }
        framesAtStart = conn.framesWritten();
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        long frames = conn.framesWritten() - framesAtStart;
        socket.close();
        stack.close();
        if (frames < sends) {
            throw new IllegalStateException(sends + " sends but only " + frames + " frames reached the sink");
        }
    }

    @Benchmark
    public int send() throws IOException {
        message.clear();
        sends++;
        return socket.send(message, destination);
    }
}
