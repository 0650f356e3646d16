package org.rds4j.bench;

import java.lang.management.ManagementFactory;
import java.util.HashMap;
import java.util.Map;

/**
 * Bytes allocated by every thread of the JVM, summed: the harness's two workers and whatever threads the contender
 * runs (event loops, media driver, rds4j's I/O threads).
 *
 * <p>Method: {@link com.sun.management.ThreadMXBean#getThreadAllocatedBytes(long[])} for all live thread ids, once
 * before and once after the measured phase; a thread's share is its counter's difference (or its whole counter if it
 * was born within the phase). The counter of a thread that dies within the phase is lost with it, so the harness
 * keeps its own threads alive across phases ({@link Worker}) and measures after the contender's threads are up. The
 * meter's own arrays (a few hundred bytes per snapshot) are counted too, which is noise against the thousands of
 * messages of a phase. HotSpot counts TLAB allocations when the TLAB is handed out, so each figure has a resolution
 * of a TLAB per thread; spread over a phase's messages it is small.
 */
final class AllocationMeter {
    private static final com.sun.management.ThreadMXBean THREADS =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

    static {
        if (THREADS.isThreadAllocatedMemorySupported() && !THREADS.isThreadAllocatedMemoryEnabled()) {
            THREADS.setThreadAllocatedMemoryEnabled(true);
        }
    }

    private AllocationMeter() {
    }

    /** Whether this JVM can measure allocations at all; if not, figures are reported as missing. */
    static boolean supported() {
        return THREADS.isThreadAllocatedMemorySupported() && THREADS.isThreadAllocatedMemoryEnabled();
    }

    /** Each live thread's allocated bytes so far, by thread id. */
    static Map<Long, Long> snapshot() {
        long[] ids = THREADS.getAllThreadIds();
        long[] bytes = THREADS.getThreadAllocatedBytes(ids);
        Map<Long, Long> out = new HashMap<>(ids.length * 2);
        for (int i = 0; i < ids.length; i++) {
            if (bytes[i] >= 0) {
                out.put(ids[i], bytes[i]);
            }
        }
        return out;
    }

    /** Bytes allocated between two snapshots, over every thread alive at the second. */
    static long allocatedBetween(Map<Long, Long> before, Map<Long, Long> after) {
        long sum = 0;
        for (Map.Entry<Long, Long> e : after.entrySet()) {
            sum += e.getValue() - before.getOrDefault(e.getKey(), 0L);
        }
        return sum;
    }
}
