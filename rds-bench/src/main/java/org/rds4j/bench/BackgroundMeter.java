package org.rds4j.bench;

import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import org.rds4j.tools.JvmCpu;

/**
 * The JVM's own work beside the contender's: its JIT compilers and its collector. A warm-up batch is quiet when the
 * compilers finished nothing during it and the JVM's own threads used less than {@link #QUIET_SHARE} of a core; a
 * cell measured before that shows the harness's timing, not the library's. On two cores a compiler thread busy with C2
 * takes most of a core from the contender.
 *
 * <p>Two readings, because neither is enough alone. The compilers' accumulated time
 * ({@link CompilationMXBean#getTotalCompilationTime()}) moves only when a compilation ends: two batches that both ran
 * inside one long C2 compilation looked quiet, agreed with each other, and ended the warm-up. The JVM's own threads
 * are not Java threads and have no CPU counter of their own, so their share is what the process's CPU time holds beyond
 * the sum of its live Java threads' (as {@code --threads} prints it): this also counts the collector's concurrent work,
 * and a Java thread that ended during the batch (its time leaves the sum), which costs at most one more batch.
 */
final class BackgroundMeter {
    /** The most of one core the JVM's own threads may use in a batch that counts as quiet. */
    static final double QUIET_SHARE = 0.10;

    private static final CompilationMXBean JIT = ManagementFactory.getCompilationMXBean();

    /**
     * One reading.
     *
     * @param compileMillis milliseconds the compilers have worked so far, or -1 if this JVM cannot tell
     * @param backgroundCpuNanos the process's CPU time beyond its live Java threads', or -1 if this JVM cannot tell
     * @param wallNanos {@link System#nanoTime()} when it was taken
     */
    record Reading(long compileMillis, long backgroundCpuNanos, long wallNanos) {
    }

    private BackgroundMeter() {
    }

    /** A reading now. Allocates (the thread ids): take it outside a measured phase. */
    static Reading read() {
        long compile = JIT != null && JIT.isCompilationTimeMonitoringSupported() ? JIT.getTotalCompilationTime() : -1;
        return new Reading(compile, JvmCpu.ownThreadsCpuNanos(), System.nanoTime());
    }

    /**
     * Whether the JVM's own work was quiet between two readings: no compilation ended, and its threads used less
     * than {@link #QUIET_SHARE} of a core. What this JVM cannot tell counts as quiet.
     *
     * @param before the reading at the start of the batch
     * @param after the reading at its end
     * @return whether the batch ran with the compilers and the collector quiet
     */
    static boolean quiet(Reading before, Reading after) {
        if (before.compileMillis() >= 0 && after.compileMillis() >= 0
                && after.compileMillis() != before.compileMillis()) {
            return false;
        }
        long wall = after.wallNanos() - before.wallNanos();
        if (before.backgroundCpuNanos() < 0 || after.backgroundCpuNanos() < 0 || wall <= 0) {
            return true;
        }
        return after.backgroundCpuNanos() - before.backgroundCpuNanos() < QUIET_SHARE * wall;
    }
}
