package org.rds4j.bench;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.HdrHistogram.Histogram;
import org.rds4j.tools.JvmCpu;
import org.rds4j.tools.ThreadPlacement;

/**
 * Measures one cell: opens the contender's link, warms it up, measures throughput (with allocation and CPU) and then
 * round trips, lets the link verify itself, and closes everything it opened, whatever happens. A link of several
 * endpoint pairs gets a sender and a receiver worker per pair; the phases split their messages and round trips over
 * the pairs (see {@link ThroughputPhase}), and the figures are for all pairs together.
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
 * instability of the contender when it was the harness measuring too early. Nor is a warm-up batch stable while the
 * JIT or the collector worked during it ({@link BackgroundMeter}): a cell of 1 MiB messages run alone reaches the
 * message count after a few hundred messages, and two such batches agreed within 10 % while C2 took 29 % of the samples
 * (rds4j-tcp then measured 1,320 msgs/s at 1.25 CPU-ms per message, against about 3,700 at 0.5 after smaller cells had
 * warmed the JIT). A compilation in progress does not show in the compilers' time until it ends, so the JVM's own
 * threads' CPU counts too: pinned 64-byte loopback cells after a TCP cell ended their warm-up while C2 held 64 to 73 %
 * of a core, and measured 1.8 to 3.6 M msgs/s in phases of 0.6 to 1.1 s instead of 2 (5 to 6 M otherwise). The
 * round-trip warm-up likewise goes on (within the same limit) until a batch runs with the JVM quiet.
 *
 * <p>After each warm-up the heap is collected ({@link #settle()}), so that each measured phase starts in the state
 * a long-running application is in: whatever the contender pooled while warming up is in the old generation. Without
 * it, a contender that allocates nothing per message kept its pools in the young generation for the whole cell, or
 * not, depending on whether a collection happened to come after they filled; G1 then either skips the
 * remembered-set work of every reference stored into a pooled object, or does it (concurrent refinement took a tenth
 * of the CPU in a 64-byte run of the loopback transport, and none in the same run over TCP).
 */
final class CellRunner {
    /** How long a round of settling waits for the finalizer thread, at most, before it goes on anyway. */
    private static final long FINALIZER_IDLE_TIMEOUT_NANOS = TimeUnit.SECONDS.toNanos(5);
    private static final int MIN_SETTLE_ROUNDS = 2;
    private static final int MAX_SETTLE_ROUNDS = 5;
    private static final MemoryMXBean MEMORY = ManagementFactory.getMemoryMXBean();
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
    /** Placing a worker runs one taskset. */
    private static final long PLACE_TIMEOUT_SECONDS = 30;

    private final Settings settings;
    /** {@code --pin}, or {@code null}. */
    private final ThreadPlacement placement;
    /** Each thread's CPU time in the last cell's throughput phase ({@code --threads}); empty if it did not run. */
    private List<ThreadCpuMeter.ThreadCpu> lastThreadCpu = List.of();
    /** What each thread allocated in the last cell's throughput phase ({@code --threads}); empty if it did not run. */
    private List<AllocationMeter.ThreadBytes> lastThreadAllocation = List.of();
    /** How the link's own counters moved in the last cell's throughput phase ({@code --threads}); empty if none. */
    private List<CounterDeltas.Delta> lastCounters = List.of();

    CellRunner(Settings settings) {
        this(settings, null);
    }

    CellRunner(Settings settings, ThreadPlacement placement) {
        this.settings = settings;
        this.placement = placement;
    }

    CellResult run(Contender contender, int size) {
        lastThreadCpu = List.of();
        lastThreadAllocation = List.of();
        lastCounters = List.of();
        try {
            return measure(contender, size);
        } catch (CellFailure e) {
            return CellResult.failed(contender.name(), size, e.describe());
        } catch (Exception | LinkageError e) {
            return CellResult.failed(contender.name(), size, e.toString());
        }
    }

    private CellResult measure(Contender contender, int size) throws Exception {
        List<Worker> workers = new ArrayList<>();
        try (Link link = contender.open(size)) {
            int pairs = link.pairs();
            List<Worker> a = new ArrayList<>();
            List<Worker> b = new ArrayList<>();
            ThroughputPhase[] throughput = new ThroughputPhase[pairs];
            RoundTripPhase[] roundTrips = new RoundTripPhase[pairs];
            for (int p = 0; p < pairs; p++) {
                String suffix = pairs == 1 ? "" : "-" + p;
                a.add(new Worker(ThreadCpuMeter.HARNESS_PREFIX + contender.name() + "-a" + suffix));
                b.add(new Worker(ThreadCpuMeter.HARNESS_PREFIX + contender.name() + "-b" + suffix));
                // Each pair's threads stamp and receive into buffers of their own.
                ByteBuffer message = Payload.newMessage(size);
                ByteBuffer receivedByA = ByteBuffer.allocateDirect(Math.max(size, ThroughputPhase.ACK_SIZE));
                ByteBuffer receivedByB = ByteBuffer.allocateDirect(size);
                throughput[p] = new ThroughputPhase(link.a(p), link.b(p), size, message, receivedByA, receivedByB);
                roundTrips[p] = new RoundTripPhase(link.a(p), link.b(p), size, message, receivedByA, receivedByB);
            }
            workers.addAll(a);
            workers.addAll(b);
            PhaseRunner phases = new PhaseRunner(link, a, b);
            Sequence seq = new Sequence();

            place(link, a, b);
            long n = warmUpThroughput(phases, throughput, seq, size);
            place(link, a, b);                  // again: threads a link starts on its first message exist now
            settle();
            Map<String, Long> countersA0 = link.counters(true);                       // allocate: outside too
            Map<String, Long> countersB0 = link.counters(false);
            Map<Long, ThreadCpuMeter.ThreadCpu> threads0 = ThreadCpuMeter.snapshot();   // allocates: outside
            Map<Long, Long> alloc0 = AllocationMeter.snapshot();
            long cpu0 = JvmCpu.processCpuNanos();
            long nanos = runThroughput(phases, throughput, seq, n, size, "throughput");
            long cpu1 = JvmCpu.processCpuNanos();
            Map<Long, Long> alloc1 = AllocationMeter.snapshot();
            Map<Long, ThreadCpuMeter.ThreadCpu> threads1 = ThreadCpuMeter.snapshot();
            lastThreadCpu = ThreadCpuMeter.between(threads0, threads1);
            lastThreadAllocation = AllocationMeter.byThread(alloc0, alloc1, threads1);
            List<CounterDeltas.Delta> counters = new ArrayList<>(
                    CounterDeltas.between(true, countersA0, link.counters(true)));
            counters.addAll(CounterDeltas.between(false, countersB0, link.counters(false)));
            lastCounters = counters;
            long allocated = AllocationMeter.supported() ? AllocationMeter.allocatedBetween(alloc0, alloc1) : -1;
            long cpu = cpu0 < 0 || cpu1 < 0 ? -1 : cpu1 - cpu0;

            long k = warmUpRoundTrips(phases, roundTrips, seq, size);
            settle();
            Histogram[] perPair = new Histogram[pairs];
            for (int p = 0; p < pairs; p++) {
                perPair[p] = RoundTripPhase.newHistogram();
            }
            runRoundTrips(phases, roundTrips, seq, k, size, "round trips", perPair);
            Histogram h = RoundTripPhase.newHistogram();
            for (Histogram hp : perPair) {
                h.add(hp);
            }
            link.verify();
            return new CellResult(contender.name(), size, null, n, nanos, allocated, cpu, h.getTotalCount(),
                    h.getValueAtPercentile(50), h.getValueAtPercentile(99), h.getValueAtPercentile(99.9));
        } finally {
            workers.forEach(Worker::close);
        }
    }

    /**
     * The CPU time of each thread in the throughput phase of the cell {@link #run} measured last.
     *
     * @return the threads, the busiest first; empty if the cell failed before the phase ended
     */
    List<ThreadCpuMeter.ThreadCpu> lastThreadCpu() {
        return lastThreadCpu;
    }

    /**
     * What each thread allocated in the throughput phase of the cell {@link #run} measured last.
     *
     * @return the threads that allocated, the most first; empty if none did or the cell failed before the phase ended
     */
    List<AllocationMeter.ThreadBytes> lastThreadAllocation() {
        return lastThreadAllocation;
    }

    /**
     * How the link's own counters moved in the throughput phase of the cell {@link #run} measured last.
     *
     * @return both sides' counters that moved; empty if the contender keeps none or the cell failed before the phase
     *     ended
     */
    List<CounterDeltas.Delta> lastCounters() {
        return lastCounters;
    }

    /**
     * {@code --pin}: each side's workers and the threads its link runs for it ({@link Link#threadPrefix}) on that
     * side's core. Placing a thread twice does no harm.
     */
    private void place(Link link, List<Worker> a, List<Worker> b) throws Exception {
        if (placement == null) {
            return;
        }
        for (boolean sideA : new boolean[] {true, false}) {
            for (Worker w : sideA ? a : b) {
                w.submit(() -> {
                    placement.pinCallingThread(sideA);
                    return null;
                }).get(PLACE_TIMEOUT_SECONDS, TimeUnit.SECONDS);
            }
            String prefix = link.threadPrefix(sideA);
            if (prefix != null) {
                placement.pinThreadsNamed(prefix, sideA);
            }
        }
    }

    /**
     * A full collection between the warm-up and the measured phase: what the contender keeps is old from then on, as in
     * an application that has run for a while, and no collection the warm-up's garbage made due falls into the phase.
     *
     * <p>The finalizers that collections find due run to their end here too, not on the JVM's finalizer thread during
     * the phase: Netty frees the arenas of an allocator nobody holds any more (an earlier cell's stacks') in
     * finalizers, and the finalizer thread allocated about 60 KB doing so, charged to a 1 MiB cell as 13 to 36 bytes
     * per message. One round was not enough: {@link System#runFinalization()} returns once the queue is empty while
     * the finalizer thread may still be in the one it took last (so each round also waits until it waits for work
     * again), and an object with a finalizer keeps what it references, other such objects included, until that
     * finalizer has run, so those become due one collection later. So at least {@value #MIN_SETTLE_ROUNDS} rounds,
     * and more while finalizations are still pending after one, up to {@value #MAX_SETTLE_ROUNDS}.
     */
    @SuppressWarnings("java:S1215")     // explicit collections are the point here
    private static void settle() {
        for (int round = 1; round <= MAX_SETTLE_ROUNDS; round++) {
            System.gc();
            System.runFinalization();
            FinalizerThread.awaitIdle(FINALIZER_IDLE_TIMEOUT_NANOS);
            if (round >= MIN_SETTLE_ROUNDS && MEMORY.getObjectPendingFinalizationCount() == 0) {
                return;
            }
        }
    }

    /** Warms up with throughput batches; returns the message count of the measured phase. */
    private long warmUpThroughput(PhaseRunner phases, ThroughputPhase[] throughput, Sequence seq, int size)
            throws CellFailure {
        if (settings.quick()) {
            runThroughput(phases, throughput, seq, Settings.QUICK_WARMUP, size, "throughput warm-up");
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
            BackgroundMeter.Reading before = BackgroundMeter.read();
            long t = runThroughput(phases, throughput, seq, batch, size, "throughput warm-up");
            boolean jvmQuiet = BackgroundMeter.quiet(before, BackgroundMeter.read());
            warmed += batch;
            rate = batch * 1e9 / Math.max(1, t);
            // Grow until a batch takes a tenth of the warm-up: a short batch's rate is mostly start-up and ack.
            boolean grew = false;
            if (t < settings.warmupNanos() / 10 && batch < MAX_MESSAGES) {
                batch *= 2;
                grew = true;
            }
            stable = !grew && jvmQuiet && previous > 0 && Math.abs(rate - previous) <= STABLE * previous;
            previous = grew ? 0 : rate;              // compare batches of one size only
        } while (warmingUp(start, settings.warmupNanos(), warmed, wanted)
                || (!stable && System.nanoTime() - start < STABILISE_STRETCH * settings.warmupNanos()));
        if (settings.fixedCount() > 0) {
            return settings.fixedCount();
        }
        return clamp(Math.round(rate * settings.durationNanos() / 1e9), MIN_MESSAGES, MAX_MESSAGES);
    }

    /** Runs {@code n} messages over all pairs; returns the wall time from the first send to the last ack. */
    private long runThroughput(PhaseRunner phases, ThroughputPhase[] throughput, Sequence seq, long n, int size,
            String phase) throws CellFailure {
        long first = seq.take(n);
        int pairs = throughput.length;
        return ThroughputPhase.Span.elapsed(phases.run(phase,
                p -> () -> throughput[p].receive(first + p, ThroughputPhase.share(n, p, pairs), pairs),
                p -> () -> throughput[p].send(first + p, ThroughputPhase.share(n, p, pairs), pairs),
                settings.phaseTimeoutNanos(n, size)));
    }

    /** Warms up with round trips; returns the number of round trips to measure. */
    private long warmUpRoundTrips(PhaseRunner phases, RoundTripPhase[] roundTrips, Sequence seq, int size)
            throws CellFailure {
        if (settings.quick()) {
            runRoundTrips(phases, roundTrips, seq, Settings.QUICK_WARMUP, size, "round-trip warm-up", null);
            return settings.fixedCount() > 0 ? settings.fixedCount() : Settings.QUICK_COUNT;
        }
        long batch = 8;
        double rate = 0;
        long warmup = settings.warmupNanos() / 2;
        long start = System.nanoTime();
        long wanted = Math.min(WARMUP_ROUND_TRIPS, WARMUP_BYTES / size);
        long warmed = 0;
        boolean jvmQuiet;
        do {
            BackgroundMeter.Reading before = BackgroundMeter.read();
            long t = runRoundTrips(phases, roundTrips, seq, batch, size, "round-trip warm-up", null);
            jvmQuiet = BackgroundMeter.quiet(before, BackgroundMeter.read());
            warmed += batch;
            rate = batch * 1e9 / Math.max(1, t);
            if (t < warmup / 10 && batch < MAX_ROUND_TRIPS) {
                batch *= 2;
            }
        } while (warmingUp(start, warmup, warmed, wanted)
                || (!jvmQuiet && System.nanoTime() - start < STABILISE_STRETCH * warmup));
        if (settings.fixedCount() > 0) {
            return settings.fixedCount();
        }
        return clamp(Math.round(rate * settings.durationNanos() / 2 / 1e9), MIN_ROUND_TRIPS, MAX_ROUND_TRIPS);
    }

    /**
     * Runs {@code n} round trips over all pairs at once, pair {@code p} into {@code histograms[p]} (null: not
     * recorded); returns the longest pair's time.
     */
    private long runRoundTrips(PhaseRunner phases, RoundTripPhase[] roundTrips, Sequence seq, long n, int size,
            String phase, Histogram[] histograms) throws CellFailure {
        long first = seq.take(n);
        int pairs = roundTrips.length;
        List<Long> times = phases.run(phase,
                p -> () -> roundTrips[p].echo(first + p, ThroughputPhase.share(n, p, pairs), pairs),
                p -> () -> roundTrips[p].ping(first + p, ThroughputPhase.share(n, p, pairs), pairs,
                        histograms == null ? null : histograms[p]),
                settings.phaseTimeoutNanos(2 * n, size));
        return times.stream().mapToLong(Long::longValue).max().orElse(0);
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
