package org.rds4j.bench;

import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;

/**
 * The JIT compilers' accumulated time, from {@link CompilationMXBean#getTotalCompilationTime()}: a warm-up batch
 * during which it did not move ran on compiled code that the compilers had nothing more to do for. On two cores a
 * compiler thread busy with C2 takes most of a core from the contender; a cell measured then shows the harness's
 * timing, not the library's.
 */
final class JitMeter {
    private static final CompilationMXBean JIT = ManagementFactory.getCompilationMXBean();

    private JitMeter() {
    }

    /** Milliseconds the compilers have worked so far, or -1 if this JVM cannot tell. */
    static long compileMillis() {
        return JIT != null && JIT.isCompilationTimeMonitoringSupported() ? JIT.getTotalCompilationTime() : -1;
    }

    /** Whether no compilation time accrued between two readings (true if the JVM cannot tell). */
    static boolean quiet(long before, long after) {
        return before < 0 || after < 0 || after == before;
    }
}
