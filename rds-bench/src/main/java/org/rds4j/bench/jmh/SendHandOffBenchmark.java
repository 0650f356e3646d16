package org.rds4j.bench.jmh;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
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
import org.rds4j.EtimedoutException;
import org.rds4j.RdsSocket;
import org.rds4j.RdsSocketOptions;
import org.rds4j.RdsStack;
import org.rds4j.RdsStackConfig;

/**
 * The send path across two threads, with no I/O: {@link EnqueueTransmitBenchmark}'s sends, but the transmit runs on
 * a second thread, as a stack's I/O thread runs it. One thread of the group sends 64-byte messages on a blocking
 * socket; the other polls the connection and runs the transmit passes asked for ({@link BlackholeTransport.Conn#runTransmits}),
 * with the pretend peer's acknowledgement every {@value #ACK_EVERY} frames, which gives messages and budget back to
 * the socket.
 *
 * <p>What it measures that the single-threaded benchmarks cannot: what the objects and fields the two threads share
 * cost when they cross cores (the path's inbox, the socket's send budget and message pool, each message), which is
 * most of a message's cost in the two-stack benchmark and which that benchmark's run-to-run noise hides. The score
 * to read is {@code handOff:send}, sends per microsecond; {@code handOff:transmit} counts the polls, busy or not.
 * It needs two cores to mean anything.
 */
@State(Scope.Group)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class SendHandOffBenchmark {
    static final int ACK_EVERY = 16;
    static final int SIZE = 64;

    private RdsStack stack;
    private RdsSocket socket;
    private InetSocketAddress destination;
    private BlackholeTransport.Conn conn;
    private ByteBuffer message;
    private long timeouts;

    @Setup(Level.Trial)
    public void setUp() throws IOException, InterruptedException {
        InetAddress local = InetAddress.getByName("10.251.0.3");
        InetAddress peer = InetAddress.getByName("10.251.0.4");
        String name = "jmh-handoff";
        stack = RdsStack.create(RdsStackConfig.builder().name(name).address(local).build());
        socket = stack.openSocket();
        socket.setOption(RdsSocketOptions.SO_RDS_TRANSPORT, BlackholeTransport.NAME);
        // Blocking, as the bench's senders are; the timeout only keeps a sender from waiting for ever once the
        // transmitting thread has stopped at the end of an iteration.
        socket.setOption(RdsSocketOptions.SO_SNDTIMEO, Duration.ofMillis(100));
        socket.bind(new InetSocketAddress(local, 0));
        BlackholeTransport.Instance transport = BlackholeTransport.instance(name);
        transport.autoAck(ACK_EVERY);
        destination = new InetSocketAddress(peer, 4000);
        message = ByteBuffer.allocateDirect(SIZE);
        socket.send(message.clear(), destination);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while ((conn = transport.outgoing(peer)) == null || conn.framesWritten() == 0) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("the connection never came up");
            }
            Thread.sleep(1);
        }
        transport.handOff(true);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        socket.close();
        stack.close();
        if (timeouts > 10) {
            // A few at the ends of iterations are expected; many mean the transmitting thread did not keep up.
            System.out.println("sends that timed out waiting for budget: " + timeouts);
        }
    }

    @Benchmark
    @Group("handOff")
    @GroupThreads(1)
    public int send() throws IOException {
        message.clear();
        try {
            return socket.send(message, destination);
        } catch (EtimedoutException e) {
            timeouts++;
            return -1;
        }
    }

    @Benchmark
    @Group("handOff")
    @GroupThreads(1)
    public boolean transmit() {
        return conn.runTransmits();
    }
}
