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
import org.rds4j.RdsMessageInfo;
import org.rds4j.RdsSelector;
import org.rds4j.RdsSocket;
import org.rds4j.RdsSocketOptions;
import org.rds4j.RdsStack;
import org.rds4j.RdsStackConfig;

/**
 * {@link RdsSelector} (public API) with many sockets and one select loop, over the loopback transport so that no
 * network noise enters: {@code oneReady} sends one message to one of the {@code sockets} receivers (in turn) and
 * selects until that socket is reported and read; {@code noneReady} is a select that finds nothing, the cost of an
 * idle poll over all registered sockets.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class RdsSelectorBenchmark {
    /** Selects per message at most, so a lost message fails the benchmark instead of hanging it. */
    private static final int MAX_SELECTS = 10_000;

    @Param({"16", "1024"})
    public int sockets;

    private RdsStack stackA;
    private RdsStack stackB;
    private RdsSocket sender;
    private RdsSocket[] receivers;
    private InetSocketAddress[] destinations;
    private RdsSelector selector;
    private final ByteBuffer message = ByteBuffer.allocateDirect(64);
    private final ByteBuffer received = ByteBuffer.allocateDirect(64);
    private final RdsMessageInfo info = new RdsMessageInfo();
    private final Duration waitUpTo = Duration.ofSeconds(1);
    private int next;
    private int handled;
    private final RdsSelector.ReadyHandler drain = (socket, ops) -> {
        received.clear();
        socket.receive(received, info, RdsSocket.MSG_DONTWAIT);
        handled++;
    };

    @Setup(Level.Trial)
    public void setUp() throws IOException {
        InetAddress a = InetAddress.getByName("127.0.0.1");
        InetAddress b = InetAddress.getByName("127.0.0.2");
        stackA = RdsStack.create(RdsStackConfig.builder().name("jmh-a").address(a).defaultTransport("loopback")
                .build());
        stackB = RdsStack.create(RdsStackConfig.builder().name("jmh-b").address(b).defaultTransport("loopback")
                .build());
        sender = stackA.openSocket();
        sender.setOption(RdsSocketOptions.SO_RDS_TRANSPORT, "loopback");
        sender.bind(new InetSocketAddress(a, 0));
        selector = RdsSelector.open(stackB);
        receivers = new RdsSocket[sockets];
        destinations = new InetSocketAddress[sockets];
        for (int i = 0; i < sockets; i++) {
            RdsSocket s = stackB.openSocket();
            s.setOption(RdsSocketOptions.SO_RDS_TRANSPORT, "loopback");
            s.bind(new InetSocketAddress(b, 0));
            receivers[i] = s;
            destinations[i] = s.localAddress();
            selector.register(s, RdsSelector.OP_READ);
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        selector.close();
        for (RdsSocket s : receivers) {
            s.close();
        }
        sender.close();
        stackA.close();
        stackB.close();
    }

    @Benchmark
    public int oneReady() throws IOException {
        message.clear();
        sender.send(message, destinations[next]);
        next = (next + 1) % sockets;
        handled = 0;
        for (int i = 0; i < MAX_SELECTS && handled == 0; i++) {
            selector.select(waitUpTo, drain);
        }
        if (handled == 0) {
            throw new IllegalStateException("the message was never reported ready");
        }
        return handled;
    }

    @Benchmark
    public int noneReady() throws IOException {
        return selector.select(Duration.ZERO, drain);
    }
}
