package org.rds4j.bench.jmh;

import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;
import org.rds4j.core.wire.RdsHeader;

/**
 * The 48-byte RDS header codec ({@link RdsHeader}, the one rds-core class the bench module uses: its shape is fixed
 * by the wire format). Encoding and decoding happen once per message on each side, so their cost is a floor under
 * rds4j's per-message CPU. Heap and direct buffers, since the transports use both.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class RdsHeaderBenchmark {
    @Param({"heap", "direct"})
    public String buffer;

    private final RdsHeader header = new RdsHeader();
    private final RdsHeader decoded = new RdsHeader();
    private ByteBuffer wire;

    @Setup
    public void setUp() {
        header.sequence(0x0123_4567_89ABL).length(1024).sourcePort(4000).destinationPort(4001)
                .flags(RdsHeader.FLAG_RETRANSMITTED);
        wire = buffer.equals("direct") ? ByteBuffer.allocateDirect(RdsHeader.SIZE) : ByteBuffer.allocate(RdsHeader.SIZE);
        header.encode(wire);
        wire.clear();
    }

    @Benchmark
    public ByteBuffer encode() {
        wire.clear();
        header.encode(wire);
        return wire;
    }

    @Benchmark
    public RdsHeader decode() {
        wire.clear();
        return decoded.decode(wire);
    }

    /** What a relay does: decode a header, change a field, encode it again. */
    @Benchmark
    public ByteBuffer decodeAndEncode() {
        wire.clear();
        decoded.decode(wire);
        wire.clear();
        decoded.encode(wire);
        return wire;
    }
}
