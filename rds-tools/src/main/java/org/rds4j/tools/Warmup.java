package org.rds4j.tools;

import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * How long {@code stress} warms up: at least what {@code --warmup} asks, and on from there, a second at a time, until a
 * second in which the JVM's own threads (its JIT compilers, its collector, the VM thread) used less than
 * {@link #QUIET_SHARE} of a core; at most {@link #MAX_FACTOR} times what was asked. On a machine with fewer cores than
 * the test has busy threads the compilers get a small share of the CPU, and the stack runs partly interpreted for
 * several seconds: a summary that counted those seconds would report the JIT's progress, not the stack's rate
 * (the benchmark's warm-up follows the same rule, decision 0020, and decision 0050 measured it for stress).
 *
 * <p>The JVM's own threads' CPU is read as {@link JvmCpu} reads it, the process's beyond its live Java threads'. A
 * Java thread that ends within a second moves its time there too; stress starts all its threads before the warm-up
 * and ends none during it.
 */
final class Warmup {
    /** The most of one core the JVM's own threads may use in the second that ends the warm-up. */
    static final double QUIET_SHARE = 0.10;
    /** The longest warm-up, as a multiple of the one asked for. */
    static final int MAX_FACTOR = 10;
    /** The length of one look at the JVM's own threads once the minimum has passed. */
    static final long SLICE_NANOS = TimeUnit.SECONDS.toNanos(1);

    private final long minNanos;
    private final LongSupplier processCpuNanos;
    private final LongSupplier javaThreadsCpuNanos;

    /**
     * @param minNanos the warm-up asked for; 0 for none
     * @param processCpuNanos the process's CPU time so far, or -1 if unknown
     * @param javaThreadsCpuNanos the sum of the live Java threads' CPU time so far, or -1 if unknown
     */
    Warmup(long minNanos, LongSupplier processCpuNanos, LongSupplier javaThreadsCpuNanos) {
        this.minNanos = minNanos;
        this.processCpuNanos = processCpuNanos;
        this.javaThreadsCpuNanos = javaThreadsCpuNanos;
    }

    /** The warm-up asked for, read from this JVM's own counters. */
    static Warmup ofThisJvm(long minNanos) {
        return new Warmup(minNanos, JvmCpu::processCpuNanos, JvmCpu::javaThreadsCpuNanos);
    }

    /** The warm-up asked for. */
    long minNanos() {
        return minNanos;
    }

    /** The longest the warm-up may run. */
    long maxNanos() {
        return minNanos > Long.MAX_VALUE / MAX_FACTOR ? Long.MAX_VALUE : minNanos * MAX_FACTOR;
    }

    /** The CPU time of the JVM's own threads so far, or -1 if this JVM cannot tell. */
    long backgroundCpuNanos() {
        long threads = javaThreadsCpuNanos.getAsLong();
        long process = processCpuNanos.getAsLong();
        return threads < 0 || process < 0 ? -1 : process - threads;
    }

    /**
     * Whether the warm-up ends after a look at the JVM's own threads.
     *
     * @param elapsedNanos how long the warm-up has run
     * @param backgroundNanos the JVM's own threads' CPU time over the last look, or -1 if unknown
     * @param lookNanos how long the last look lasted
     * @return true once the minimum has passed and the last look was quiet (or could not tell), or at the maximum
     */
    boolean ends(long elapsedNanos, long backgroundNanos, long lookNanos) {
        if (elapsedNanos < minNanos) {
            return false;
        }
        if (elapsedNanos >= maxNanos() || backgroundNanos < 0 || lookNanos <= 0) {
            return true;
        }
        return backgroundNanos < QUIET_SHARE * lookNanos;
    }
}
