package org.rds4j.bench;

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Bytes allocated by every thread of the JVM, summed: the harness's two workers and whatever threads the contender
 * runs (event loops, media driver, rds4j's I/O threads).
 *
 * <p>Method: {@link com.sun.management.ThreadMXBean#getThreadAllocatedBytes(long[])} for all live thread ids, once
 * before and once after the measured phase; a thread's share is its counter's difference (or its whole counter if it
 * was born within the phase). The counter of a thread that dies within the phase is lost with it, so the harness
 * keeps its own threads alive across phases ({@link Worker}) and measures after the contender's threads are up.
 *
 * <p>The coordinating thread, the one that takes the snapshots, is left out of the sum: in the phase it only starts
 * each side's task on its worker and waits for them, running no contender code, and that bookkeeping (futures for
 * every task, the meter's own arrays) is a few kilobytes per phase, which a 1 MiB cell with eight socket pairs,
 * a few thousand messages, charged to the contender as three bytes per message. {@code --threads} leaves it out
 * too.
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

    /**
     * Bytes allocated between two snapshots taken by this thread, over every other thread alive at the second.
     */
    static long allocatedBetween(Map<Long, Long> before, Map<Long, Long> after) {
        long coordinator = Thread.currentThread().getId();
        long sum = 0;
        for (Map.Entry<Long, Long> e : after.entrySet()) {
            if (e.getKey() != coordinator) {
                sum += e.getValue() - before.getOrDefault(e.getKey(), 0L);
            }
        }
        return sum;
    }

    /**
     * One thread's bytes allocated over a phase.
     *
     * @param name the thread's name
     * @param bytes bytes allocated
     */
    record ThreadBytes(String name, long bytes) {
    }

    /**
     * Each thread that allocated between two snapshots, the most first ({@code --threads}): which thread's pool grew,
     * or which path allocates per message.
     *
     * @param before the snapshot taken before the phase
     * @param after the snapshot taken after it
     * @param names the threads' names by id ({@link ThreadCpuMeter#snapshot()}); an id it lacks shows as a number
     * @return the threads alive at {@code after} that allocated in between, except this one (the coordinator)
     */
    static List<ThreadBytes> byThread(Map<Long, Long> before, Map<Long, Long> after,
            Map<Long, ThreadCpuMeter.ThreadCpu> names) {
        long coordinator = Thread.currentThread().getId();
        List<ThreadBytes> out = new ArrayList<>();
        for (Map.Entry<Long, Long> e : after.entrySet()) {
            long bytes = e.getValue() - before.getOrDefault(e.getKey(), 0L);
            if (bytes > 0 && e.getKey() != coordinator) {
                ThreadCpuMeter.ThreadCpu t = names.get(e.getKey());
                out.add(new ThreadBytes(t != null ? t.name() : "thread " + e.getKey(), bytes));
            }
        }
        out.sort(Comparator.comparingLong(ThreadBytes::bytes).reversed().thenComparing(ThreadBytes::name));
        return out;
    }

    /**
     * The lines {@code --threads} prints for a cell's allocations: each thread that allocated in the throughput
     * phase, in bytes and in bytes per message.
     *
     * @param threads the phase's threads, from {@link #byThread}
     * @param messages the phase's messages
     * @return the lines, indented, without line ends
     */
    static List<String> describe(List<ThreadBytes> threads, long messages) {
        List<String> out = new ArrayList<>();
        if (messages <= 0) {
            return out;
        }
        if (threads.isEmpty()) {
            out.add("  bytes allocated by thread in the throughput phase: none");
            return out;
        }
        out.add("  bytes allocated by thread in the throughput phase: bytes, bytes per message");
        for (ThreadBytes t : threads) {
            out.add(String.format(Locale.ROOT, "    %-32s %,12d %12.2f", t.name(), t.bytes(),
                    (double) t.bytes() / messages));
        }
        return out;
    }
}
