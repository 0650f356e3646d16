package org.rds4j.bench;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The CPU time of each thread of the JVM over a cell's measured throughput phase ({@code --threads}): which of the
 * harness's workers, the contender's I/O threads, the JIT and the collector the cell's CPU went to. It reports
 * what {@code /proc} shows per thread, without reading it by hand; a cell whose figure moves is explained by its threads.
 *
 * <p>Method: {@link com.sun.management.ThreadMXBean#getThreadCpuTime(long[])} (user and system time, so the kernel's
 * work in a thread's system calls, such as TCP on loopback, is that thread's) for all live threads, once before and
 * once after the phase, outside the allocation meter's window; a thread's share is the difference, or its whole time
 * if it was born within the phase. A thread that ends within the phase is not counted, as with {@link
 * AllocationMeter}. The JVM's own threads (the collector's, the JIT compilers', the VM thread) are not Java threads
 * and have no such counter: what the process's CPU time ({@link org.rds4j.tools.JvmCpu#processCpuNanos}) holds
 * beyond the Java threads' sum is theirs and that of threads that ended, and is printed as one line.
 */
final class ThreadCpuMeter {
    /** Threads below this share of a core are summed into one line. */
    static final double MIN_SHARE = 0.01;

    private static final com.sun.management.ThreadMXBean THREADS =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

    static {
        if (THREADS.isThreadCpuTimeSupported() && !THREADS.isThreadCpuTimeEnabled()) {
            THREADS.setThreadCpuTimeEnabled(true);
        }
    }

    /**
     * One thread's CPU time.
     *
     * @param name the thread's name
     * @param cpuNanos CPU nanoseconds, user and system
     */
    record ThreadCpu(String name, long cpuNanos) {
    }

    private ThreadCpuMeter() {
    }

    /** Each live thread's name and CPU time so far, by thread id; empty if this JVM cannot tell. */
    static Map<Long, ThreadCpu> snapshot() {
        if (!THREADS.isThreadCpuTimeSupported() || !THREADS.isThreadCpuTimeEnabled()) {
            return Map.of();
        }
        long[] ids = THREADS.getAllThreadIds();
        long[] cpu = THREADS.getThreadCpuTime(ids);
        ThreadInfo[] info = THREADS.getThreadInfo(ids, 0);
        Map<Long, ThreadCpu> out = new HashMap<>(ids.length * 2);
        for (int i = 0; i < ids.length; i++) {
            if (cpu[i] >= 0 && info[i] != null) {
                out.put(ids[i], new ThreadCpu(info[i].getThreadName(), cpu[i]));
            }
        }
        return out;
    }

    /**
     * Each thread's CPU time between two snapshots, the busiest first; threads that used none are left out.
     *
     * @param before the snapshot taken before the phase
     * @param after the snapshot taken after it
     * @return the threads alive at {@code after} that used CPU in between
     */
    static List<ThreadCpu> between(Map<Long, ThreadCpu> before, Map<Long, ThreadCpu> after) {
        List<ThreadCpu> out = new ArrayList<>();
        for (Map.Entry<Long, ThreadCpu> e : after.entrySet()) {
            ThreadCpu then = before.get(e.getKey());
            long used = e.getValue().cpuNanos() - (then == null ? 0 : then.cpuNanos());
            if (used > 0) {
                out.add(new ThreadCpu(e.getValue().name(), used));
            }
        }
        out.sort(Comparator.comparingLong(ThreadCpu::cpuNanos).reversed().thenComparing(ThreadCpu::name));
        return out;
    }

    /**
     * The lines {@code --threads} prints for a cell: the harness's own sender and receiver ({@code bench-*}) always,
     * each other thread with at least {@link #MIN_SHARE} of a core, the others summed, and all of them, as a share of one core over the phase and as CPU nanoseconds per message.
     *
     * @param threads the phase's threads, from {@link #between}
     * @param phaseNanos the phase's wall time
     * @param messages the phase's messages
     * @param processCpuNanos the process's CPU time in the phase ({@link org.rds4j.tools.JvmCpu#processCpuNanos}), or
     *     -1: what is more than the Java threads' sum went to the JVM's own threads (the collector's, the JIT's),
     *     which are not Java threads,
     *     and to threads that ended
     * @return the lines, indented, without line ends
     */
    /** The harness's worker threads' names start so: a reader looks for them, however little they used. */
    static final String HARNESS_PREFIX = "bench-";

    static List<String> describe(List<ThreadCpu> threads, long phaseNanos, long messages, long processCpuNanos) {
        List<String> out = new ArrayList<>();
        if (threads.isEmpty() || phaseNanos <= 0 || messages <= 0) {
            out.add("  CPU by thread: not measured (this JVM cannot tell, or the phase did not run)");
            return out;
        }
        out.add(String.format(Locale.ROOT, "  CPU by thread in the throughput phase (%.2f s, %,d messages): share of "
                + "one core, CPU ns per message", phaseNanos / 1e9, messages));
        long rest = 0;
        int restCount = 0;
        long all = 0;
        for (ThreadCpu t : threads) {
            all += t.cpuNanos();
            if (t.name().startsWith(HARNESS_PREFIX) || (double) t.cpuNanos() / phaseNanos >= MIN_SHARE) {
                out.add(line(t.name(), t.cpuNanos(), phaseNanos, messages));
            } else {
                rest += t.cpuNanos();
                restCount++;
            }
        }
        if (restCount > 0) {
            out.add(line(restCount + " more thread" + (restCount == 1 ? "" : "s"), rest, phaseNanos, messages));
        }
        out.add(line("all Java threads", all, phaseNanos, messages));
        if (processCpuNanos > all) {
            out.add(line("GC, JIT and ended threads", processCpuNanos - all, phaseNanos, messages));
        }
        if (processCpuNanos >= 0) {
            out.add(line("process", processCpuNanos, phaseNanos, messages));
        }
        return out;
    }

    private static String line(String name, long cpuNanos, long phaseNanos, long messages) {
        return String.format(Locale.ROOT, "    %-32s %6.1f %% %12.1f", name, 100.0 * cpuNanos / phaseNanos,
                (double) cpuNanos / messages);
    }
}
