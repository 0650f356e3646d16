package org.rds4j.interop;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An rds4j tool in its own JVM, on this suite's class path (./rds4j's code); closing it kills it. Its stack logs at
 * DEBUG into a file of its own beside the suite's log ({@code tool-NAME-N.log}), with wall-clock times to set beside a
 * capture's and the suite's own log; its standard output, which the tests read, stays clean of it.
 */
final class ToolJvm implements AutoCloseable {
    /** Numbers the tool JVMs of this suite run, so that each log file is its own. */
    private static final AtomicInteger STARTED = new AtomicInteger();

    private final Process process;
    private final Path log;
    private final StringBuffer output = new StringBuffer();
    private final Thread reader;

    private ToolJvm(Process process, Path log) {
        this.process = process;
        this.log = log;
        this.reader = new Thread(() -> {
            try (java.io.BufferedReader r = new java.io.BufferedReader(new java.io.InputStreamReader(
                    process.getInputStream(), java.nio.charset.StandardCharsets.UTF_8))) {
                for (String line; (line = r.readLine()) != null; ) {
                    synchronized (output) {
                        output.append(line).append('\n');
                        output.notifyAll();
                    }
                }
            } catch (IOException closed) {
                // killed: the pipe closes under the reader
            }
        }, "tool-jvm-output");
        reader.setDaemon(true);
        reader.start();
    }

    static ToolJvm start(String... args) throws IOException {
        Path log = logDirectory().resolve("tool-" + args[0] + "-" + STARTED.incrementAndGet() + ".log");
        List<String> command = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx256m",
                "-Dorg.slf4j.simpleLogger.logFile=" + log,
                "-Dorg.slf4j.simpleLogger.log.org.rds4j=debug",
                "-Dorg.slf4j.simpleLogger.showDateTime=true",
                "-Dorg.slf4j.simpleLogger.dateTimeFormat=HH:mm:ss.SSS",
                "-cp", System.getProperty("java.class.path"), "org.rds4j.tools.Main"));
        command.addAll(List.of(args));
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        p.getOutputStream().close();
        return new ToolJvm(p, log);
    }

    /** Where the suite's own log goes (the build directory, as the POM sets it), else the working directory. */
    private static Path logDirectory() {
        String suiteLog = System.getProperty("org.slf4j.simpleLogger.logFile");
        Path dir = suiteLog == null ? null : Path.of(suiteLog).toAbsolutePath().getParent();
        return dir != null ? dir : Path.of("").toAbsolutePath();
    }

    long pid() {
        return process.pid();
    }

    String output() {
        return output.toString();
    }

    void awaitLine(String prefix, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        synchronized (output) {
            while (!output.toString().lines().anyMatch(l -> l.startsWith(prefix))) {
                long left = deadline - System.nanoTime();
                if (left <= 0 || !process.isAlive() && !reader.isAlive()) {
                    throw new AssertionError("no line '" + prefix + "' within " + timeout + state());
                }
                TimeUnit.NANOSECONDS.timedWait(output, Math.min(left, TimeUnit.MILLISECONDS.toNanos(200)));
            }
        }
    }

    /** Waits until the tool has printed {@code count} lines matching {@code regex} (a whole line). */
    void awaitLines(String regex, int count, Duration timeout) throws InterruptedException {
        java.util.regex.Pattern p = java.util.regex.Pattern.compile(regex);
        long deadline = System.nanoTime() + timeout.toNanos();
        synchronized (output) {
            while (output.toString().lines().filter(l -> p.matcher(l).matches()).count() < count) {
                long left = deadline - System.nanoTime();
                if (left <= 0 || !process.isAlive() && !reader.isAlive()) {
                    throw new AssertionError(count + " lines /" + regex + "/ not there within " + timeout + state());
                }
                TimeUnit.NANOSECONDS.timedWait(output, Math.min(left, TimeUnit.MILLISECONDS.toNanos(200)));
            }
        }
    }

    int awaitExit(Duration timeout) throws InterruptedException {
        if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            throw new AssertionError("still running after " + timeout + state());
        }
        reader.join(10_000);
        return process.exitValue();
    }

    /** What a failure message ends with: where the tool's stack logged, then everything the tool printed. */
    private String state() {
        return " (its stack's log: " + log + "):\n" + output;
    }

    @Override
    public void close() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(10, TimeUnit.SECONDS);
    }
}
