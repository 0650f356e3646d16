package org.rds4j.tools;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * {@code --pin} of {@code rds4j bench} and {@code rds4j stress}: places each side (a bench cell's sender or receiver
 * side, or one of stress's two hosts) on a core of its own, its application threads with the threads its stack runs
 * (an rds4j stack's I/O, loop and timer threads, Netty's event loop), through {@code taskset} on Linux.
 *
 * <p>Why: on a machine with few cores the scheduler moves the threads about, and where they run sets much of what a
 * contender with more than one thread per side measures (docs/decisions/0012-thread-placement-is-the-applications.md:
 * rds4j's 64-byte bench cell over TCP moved 4.4 to 6.5 M msgs/s left to the scheduler, 7.0 to 8.3 M with each
 * application thread on its stack's I/O thread's core; for stress,
 * docs/decisions/0052-stress-can-run-each-host-on-a-core-of-its-own.md). Pinned, two runs of the same build agree
 * within a few per cent, which is what an A/B comparison of a small change needs. It measures the placement
 * docs/threading.md recommends to applications, not the scheduler's: the tools' first line and the bench report's
 * command say which it is.
 *
 * <p>Java cannot set a thread's affinity itself, so this runs {@code taskset -p -c CPU TID} for each thread, found by
 * its name under {@code /proc/self/task} (a thread finds its own id through {@code /proc/thread-self}). Threads with
 * no side (Aeron's shared media driver, the loopback thread rds4j stacks share) are left to the scheduler.
 */
public final class ThreadPlacement {
    /** The kernel keeps 15 characters of a thread's name ({@code TASK_COMM_LEN}). */
    static final int COMM_LENGTH = 15;
    private static final long TASKSET_TIMEOUT_SECONDS = 10;

    private final int cpuA;
    private final int cpuB;

    private ThreadPlacement(int cpuA, int cpuB) {
        this.cpuA = cpuA;
        this.cpuB = cpuB;
    }

    /**
     * Checks that threads can be placed here: Linux's {@code /proc}, {@code taskset}, and at least two CPUs this
     * process may run on, the first two of which the sides get.
     *
     * @throws IllegalStateException with what is missing
     */
    public static ThreadPlacement onThisMachine() {
        Path self = Path.of("/proc/thread-self");
        if (!Files.exists(self)) {
            throw new IllegalStateException("--pin needs Linux (/proc/thread-self is missing); run without --pin");
        }
        List<Integer> cpus;
        try {
            cpus = allowedCpus(Files.readString(Path.of("/proc/self/status"), StandardCharsets.US_ASCII));
        } catch (IOException e) {
            throw new IllegalStateException("--pin cannot read /proc/self/status: " + e.getMessage(), e);
        }
        if (cpus.size() < 2) {
            throw new IllegalStateException("--pin needs two CPUs, and this process may run on " + cpus
                    + " only; run without --pin");
        }
        ThreadPlacement p = new ThreadPlacement(cpus.get(0), cpus.get(1));
        p.taskset(List.of("taskset", "-p", Long.toString(ownThreadId())));   // only asks: is taskset there, and works
        return p;
    }

    /** The CPU of side A (the sender and pinger), then of side B. */
    public int cpu(boolean sideA) {
        return sideA ? cpuA : cpuB;
    }

    /** Places the calling thread on its side's CPU. */
    public void pinCallingThread(boolean sideA) {
        pin(ownThreadId(), cpu(sideA));
    }

    /**
     * Places every thread of this process whose name starts with {@code prefix} on its side's CPU.
     *
     * @param prefix a name prefix; only its first {@value #COMM_LENGTH} characters can be compared
     * @return how many threads were placed
     */
    public int pinThreadsNamed(String prefix, boolean sideA) {
        String p = prefix.length() > COMM_LENGTH ? prefix.substring(0, COMM_LENGTH) : prefix;
        int placed = 0;
        for (long tid : threadsNamed(p)) {
            if (pin(tid, cpu(sideA))) {
                placed++;
            }
        }
        return placed;
    }

    /** The ids of this process's threads whose kernel name starts with {@code prefix}. */
    public static List<Long> threadsNamed(String prefix) {
        List<Long> ids = new ArrayList<>();
        try (DirectoryStream<Path> tasks = Files.newDirectoryStream(Path.of("/proc/self/task"))) {
            for (Path task : tasks) {
                try {
                    String comm = Files.readString(task.resolve("comm"), StandardCharsets.UTF_8).strip();
                    if (comm.startsWith(prefix)) {
                        ids.add(Long.parseLong(task.getFileName().toString()));
                    }
                } catch (NoSuchFileException ended) {
                    // the thread ended while the directory was read
                }
            }
        } catch (IOException e) {
            throw new IllegalStateException("cannot list /proc/self/task: " + e.getMessage(), e);
        }
        return ids;
    }

    /** The calling thread's id as the kernel knows it (what {@code taskset -p} takes). */
    public static long ownThreadId() {
        try {
            Path target = Files.readSymbolicLink(Path.of("/proc/thread-self"));    // "PID/task/TID"
            return Long.parseLong(target.getFileName().toString());
        } catch (IOException | NumberFormatException e) {
            throw new IllegalStateException("cannot read /proc/thread-self: " + e.getMessage(), e);
        }
    }

    /** The CPUs in a {@code /proc/PID/status} text's {@code Cpus_allowed_list} line, such as {@code 0-3,6}. */
    public static List<Integer> allowedCpus(String status) {
        for (String line : status.split("\n")) {
            if (line.startsWith("Cpus_allowed_list:")) {
                List<Integer> cpus = new ArrayList<>();
                for (String range : line.substring(line.indexOf(':') + 1).strip().split(",")) {
                    if (range.isEmpty()) {
                        continue;
                    }
                    int dash = range.indexOf('-');
                    int from = Integer.parseInt(dash < 0 ? range : range.substring(0, dash));
                    int to = dash < 0 ? from : Integer.parseInt(range.substring(dash + 1));
                    for (int c = from; c <= to; c++) {
                        cpus.add(c);
                    }
                }
                return cpus;
            }
        }
        throw new IllegalStateException("no Cpus_allowed_list in the process status");
    }

    /** @return false if the thread ended before it could be placed */
    private boolean pin(long tid, int cpu) {
        if (!Files.exists(Path.of("/proc/self/task/" + tid))) {
            return false;
        }
        taskset(List.of("taskset", "-p", "-c", Integer.toString(cpu), Long.toString(tid)));
        return true;
    }

    private void taskset(List<String> command) {
        Process p;
        try {
            p = new ProcessBuilder(command).redirectErrorStream(true).start();
        } catch (IOException e) {
            throw new IllegalStateException("--pin needs taskset (util-linux) on the PATH: " + e.getMessage(), e);
        }
        try {
            String out;
            try (var in = p.getInputStream()) {
                out = new String(in.readAllBytes(), StandardCharsets.UTF_8).strip();
            }
            if (!p.waitFor(TASKSET_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                throw new IllegalStateException(String.join(" ", command) + " did not finish in "
                        + TASKSET_TIMEOUT_SECONDS + " s");
            }
            if (p.exitValue() != 0) {
                throw new IllegalStateException(String.join(" ", command) + " failed (" + p.exitValue() + "): " + out);
            }
        } catch (IOException e) {
            throw new IllegalStateException(String.join(" ", command) + ": " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while running taskset", e);
        } finally {
            p.destroyForcibly();
        }
    }
}
