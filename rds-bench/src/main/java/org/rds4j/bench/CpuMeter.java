package org.rds4j.bench;

import java.lang.management.ManagementFactory;

/**
 * The CPU time of the whole process (every thread, user and system), from
 * {@link com.sun.management.OperatingSystemMXBean#getProcessCpuTime()}. It includes the kernel's work on the process's
 * behalf, such as TCP on loopback, which is why it is the fair figure for comparing libraries.
 */
final class CpuMeter {
    private static final com.sun.management.OperatingSystemMXBean OS =
            (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();

    private CpuMeter() {
    }

    /** Process CPU nanoseconds so far, or -1 if this JVM cannot tell. */
    static long processCpuNanos() {
        return OS.getProcessCpuTime();
    }
}
