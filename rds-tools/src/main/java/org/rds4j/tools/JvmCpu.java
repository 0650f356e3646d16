package org.rds4j.tools;

import java.lang.management.ManagementFactory;

/**
 * This JVM's CPU time, as the benchmark and stress read it: the whole process's (every thread, user and system, so the
 * kernel's work on its behalf, such as TCP on loopback, counts), its live Java threads' together, and what is left, the
 * JVM's own threads' (the JIT compilers, the collector, the VM thread), which are not Java threads and have no counter
 * of their own. A Java thread that ended moves its time into the last.
 */
public final class JvmCpu {
    private static final com.sun.management.OperatingSystemMXBean OS =
            (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
    private static final com.sun.management.ThreadMXBean THREADS =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

    static {
        if (THREADS.isThreadCpuTimeSupported() && !THREADS.isThreadCpuTimeEnabled()) {
            THREADS.setThreadCpuTimeEnabled(true);
        }
    }

    private JvmCpu() {
    }

    /** The process's CPU nanoseconds so far, or -1 if this JVM cannot tell. */
    public static long processCpuNanos() {
        return OS.getProcessCpuTime();
    }

    /** The CPU nanoseconds of all live Java threads so far, summed, or -1 if this JVM cannot tell. */
    public static long javaThreadsCpuNanos() {
        if (!THREADS.isThreadCpuTimeSupported() || !THREADS.isThreadCpuTimeEnabled()) {
            return -1;
        }
        long sum = 0;
        for (long cpu : THREADS.getThreadCpuTime(THREADS.getAllThreadIds())) {
            sum += Math.max(0, cpu);                // -1: the thread ended between the two calls
        }
        return sum;
    }

    /**
     * The CPU nanoseconds of the JVM's own threads so far (and of Java threads that ended): the process's beyond its
     * live Java threads'. The threads are read first, so the difference is never negative.
     *
     * @return the nanoseconds, or -1 if this JVM cannot tell
     */
    public static long ownThreadsCpuNanos() {
        long threads = javaThreadsCpuNanos();
        long process = processCpuNanos();
        return threads < 0 || process < 0 ? -1 : process - threads;
    }
}
