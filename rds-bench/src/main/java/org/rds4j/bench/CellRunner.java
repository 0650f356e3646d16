package org.rds4j.bench;

import java.nio.ByteBuffer;
import java.util.Map;
import org.HdrHistogram.Histogram;

/**
 * Measures one cell: opens the contender's link, warms it up, measures throughput (with allocation and CPU) and then
 * round trips, and closes everything it opened, whatever happens.
 *
 * <p>Phase sizes come from the warm-up: the warm-up runs throughput batches of growing size until its time is up, and
 * the last batch's rate sets the measured phase's message count so that it lasts about {@code --duration}. The same
 * goes for round trips, with half the times. {@code --count} (and {@code --quick}) fix the counts instead.
 *
 * <p>The warm-up also lasts until enough messages went through for the JIT to have compiled the hot paths (a library
 * with deep call stacks, such as Netty, needs many invocations before C2 is done, and a slow machine reaches them
 * late), but never longer than {@link #WARMUP_STRETCH} times {@code --warmup}. Then it goes on until two consecutive
 * batches of the same size agree within {@link #STABLE} (at most {@link #STABILISE_STRETCH} times {@code --warmup}):
 * on a 2-core machine the first cell of a JVM was measured while C2 was still compiling (64-byte rds4j-tcp measured
 * 0.28 M msgs/s at 7 CPU-s per million messages in a JVM's first run, 2.1 M at 0.7 in the next), which looked like
 * instability of the contender when it was the harness measuring too early.
 */
final class CellRunner {
    private static final long MIN_MESSAGES = 16;
    private static final long MAX_MESSAGES = 50_000_000;
    private static final long MIN_ROUND_TRIPS = 100;
    private static final long MAX_ROUND_TRIPS = 5_000_000;
    /** Messages (and round trips) a warm-up wants at least, if time allows: past C2's compile thresholds. */
    private static final long WARMUP_MESSAGES = 20_000;
    private static final long WARMUP_ROUND_TRIPS = 5_000;
    /** Warm-up bytes are capped, so that large messages are not held to the message count. */
    private static final long WARMUP_BYTES = 256L << 20;
    private static final int WARMUP_STRETCH = 3;
    /** Two consecutive warm-up batches whose rates differ by at most this fraction mean the rate has settled. */
    private static final double STABLE = 0.10;
    private static final int STABILISE_STRETCH = 10;

    private final Settings settings;

    CellRunner(Settings settings) {
        this.settings = settings;
    }

    CellResult run(Contender contender, int size) {
        try {
            return measure(contender, size);
        } catch (CellFailure e) {
            return CellResult.failed(contender.name(), size, e.describe());
        } catch (Exception | LinkageError e) {
            return CellResult.failed(contender.name(), size, e.toString());
        }
    }

    private CellResult measure(Contender contender, int size) throws Exception {
        ByteBuffer message = Payload.newMessage(size);
        ByteBuffer receivedByA = ByteBuffer.allocateDirect(Math.max(size, ThroughputPhase.ACK_SIZE));
        ByteBuffer receivedByB = ByteBuffer.allocateDirect(size);
        try (Link link = contender.open(size);
             Worker a = new Worker("bench-" + contender.name() + "-a");
             Worker b = new Worker("bench-" + contender.name() + "-b")) {
            PhaseRunner phases = new PhaseRunner(link, a, b);
            ThroughputPhase throughput = new ThroughputPhase(link, size, message, receivedByA, receivedByB);
            RoundTripPhase roundTrips = new RoundTripPhase(link, size, message, receivedByA, receivedByB);
            Sequence seq = new Sequence();

            long n = warmUpThroughput(phases, throughput, seq, size);
            Map<Long, Long> alloc0 = AllocationMeter.snapshot();
            long cpu0 = CpuMeter.processCpuNanos();
            long first = seq.take(n);
            long nanos = phases.run("throughput", () -> throughput.receive(first, n),
                    () -> throughput.send(first, n), settings.phaseTimeoutNanos(n, size));
            long cpu1 = CpuMeter.processCpuNanos();
            Map<Long, Long> alloc1 = AllocationMeter.snapshot();
            long allocated = AllocationMeter.supported() ? AllocationMeter.allocatedBetween(alloc0, alloc1) : -1;
            long cpu = cpu0 < 0 || cpu1 < 0 ? -1 : cpu1 - cpu0;

            long k = warmUpRoundTrips(phases, roundTrips, seq, size);
            Histogram h = RoundTripPhase.newHistogram();
            long firstPing = seq.take(k);
            phases.run("round trips", () -> roundTrips.echo(firstPing, k),
                    () -> roundTrips.ping(firstPing, k, h), settings.phaseTimeoutNanos(2 * k, size));
            return new CellResult(contender.name(), size, null, n, nanos, allocated, cpu, h.getTotalCount(),
                    h.getValueAtPercentile(50), h.getValueAtPercentile(99), h.getValueAtPercentile(99.9));
        }
    }

    /** Warms up with throughput batches; returns the message count of the measured phase. */
    private long warmUpThroughput(PhaseRunner phases, ThroughputPhase throughput, Sequence seq, int size)
            throws CellFailure {
        if (settings.quick()) {
            runThroughput(phases, throughput, seq, Settings.QUICK_WARMUP, size);
            return settings.fixedCount() > 0 ? settings.fixedCount() : Settings.QUICK_COUNT;
        }
        long batch = MIN_MESSAGES;
        double rate = 0;
        long start = System.nanoTime();
        long wanted = Math.min(WARMUP_MESSAGES, WARMUP_BYTES / size);
        long warmed = 0;
        double previous = 0;
        boolean stable;
        do {
            long t = runThroughput(phases, throughput, seq, batch, size);
            warmed += batch;
            rate = batch * 1e9 / Math.max(1, t);
            // Grow until a batch takes a tenth of the warm-up: a short batch's rate is mostly start-up and ack.
            boolean grew = false;
            if (t < settings.warmupNanos() / 10 && batch < MAX_MESSAGES) {
                batch *= 2;
                grew = true;
            }
            stable = !grew && previous > 0 && Math.abs(rate - previous) <= STABLE * previous;
            previous = grew ? 0 : rate;              // compare batches of one size only
        } while (warmingUp(start, settings.warmupNanos(), warmed, wanted)
                || (!stable && System.nanoTime() - start < STABILISE_STRETCH * settings.warmupNanos()));
        if (settings.fixedCount() > 0) {
            return settings.fixedCount();
        }
        return clamp(Math.round(rate * settings.durationNanos() / 1e9), MIN_MESSAGES, MAX_MESSAGES);
    }

    private long runThroughput(PhaseRunner phases, ThroughputPhase throughput, Sequence seq, long n, int size)
            throws CellFailure {
        long first = seq.take(n);
        return phases.run("throughput warm-up", () -> throughput.receive(first, n), () -> throughput.send(first, n),
                settings.phaseTimeoutNanos(n, size));
    }

    /** Warms up with round trips; returns the number of round trips to measure. */
    private long warmUpRoundTrips(PhaseRunner phases, RoundTripPhase roundTrips, Sequence seq, int size)
            throws CellFailure {
        if (settings.quick()) {
            runRoundTrips(phases, roundTrips, seq, Settings.QUICK_WARMUP, size);
            return settings.fixedCount() > 0 ? settings.fixedCount() : Settings.QUICK_COUNT;
        }
        long batch = 8;
        double rate = 0;
        long warmup = settings.warmupNanos() / 2;
        long start = System.nanoTime();
        long wanted = Math.min(WARMUP_ROUND_TRIPS, WARMUP_BYTES / size);
        long warmed = 0;
        do {
            long t = runRoundTrips(phases, roundTrips, seq, batch, size);
            warmed += batch;
            rate = batch * 1e9 / Math.max(1, t);
            if (t < warmup / 10 && batch < MAX_ROUND_TRIPS) {
                batch *= 2;
            }
        } while (warmingUp(start, warmup, warmed, wanted));
        if (settings.fixedCount() > 0) {
            return settings.fixedCount();
        }
        return clamp(Math.round(rate * settings.durationNanos() / 2 / 1e9), MIN_ROUND_TRIPS, MAX_ROUND_TRIPS);
    }

    private long runRoundTrips(PhaseRunner phases, RoundTripPhase roundTrips, Sequence seq, long n, int size)
            throws CellFailure {
        long first = seq.take(n);
        return phases.run("round-trip warm-up", () -> roundTrips.echo(first, n), () -> roundTrips.ping(first, n, null),
                settings.phaseTimeoutNanos(2 * n, size));
    }

    /** Until the warm-up time is up and enough messages went through, or the time is up {@code WARMUP_STRETCH} times. */
    private static boolean warmingUp(long start, long warmupNanos, long warmed, long wanted) {
        long elapsed = System.nanoTime() - start;
        return elapsed < warmupNanos || (warmed < wanted && elapsed < WARMUP_STRETCH * warmupNanos);
    }

    private static long clamp(long v, long min, long max) {
        return Math.max(min, Math.min(max, v));
    }

    /** Sequence numbers of the messages from A to B, continuing across phases so that a stale message is caught. */
    private static final class Sequence {
        private long next;

        long take(long n) {
            long first = next;
            next += n;
            return first;
        }
    }
}
