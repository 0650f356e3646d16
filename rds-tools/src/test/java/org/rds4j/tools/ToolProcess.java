package org.rds4j.tools;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * A tool running in its own JVM, on the test class path. Its stdout lines are queued by a reader thread so that a
 * test can wait for a line with a timeout (never a sleep); stderr is collected for failure messages. Close it in a
 * finally block: that kills it, with a bounded wait.
 */
final class ToolProcess implements AutoCloseable {
    private static final String END = "\u0000end of stream";

    private final String name;
    private final Process process;
    private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
    private final List<String> seen = new ArrayList<>();
    private final StringBuffer stderr = new StringBuffer();
    /** Counted down when both output streams are read to their end. */
    private final CountDownLatch drained = new CountDownLatch(2);

    private ToolProcess(String name, Process process) {
        this.name = name;
        this.process = process;
        daemon(() -> pump(process.getInputStream(), lines::add, () -> {
            lines.add(END);
            drained.countDown();
        }), "stdout");
        daemon(() -> pump(process.getErrorStream(), line -> stderr.append(line).append('\n'), drained::countDown),
                "stderr");
    }

    /** Starts {@code rds4j ARGS...} in a new JVM. */
    static ToolProcess start(String... args) throws IOException {
        List<String> command = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx256m", "-XX:+UseSerialGC",
                "-cp", System.getProperty("java.class.path"),
                Main.class.getName()));
        command.addAll(List.of(args));
        Process p = new ProcessBuilder(command).start();
        p.getOutputStream().close();
        return new ToolProcess(args.length > 0 ? args[0] : "rds4j", p);
    }

    /** A TCP port free on 127.0.0.1 right now, for the stacks' RDS/TCP listeners. */
    static int freeTcpPort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
            return s.getLocalPort();
        }
    }

    /** Waits for the next stdout line that matches, failing with the output so far if none comes in time. */
    String awaitLine(Predicate<String> matches, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            String line = lines.poll(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            if (line == null || line.equals(END)) {
                if (line != null) {
                    lines.add(END); // later waits see the end too
                }
                fail(name + ": no matching line " + (line == null ? "within " + timeout : "before exit") + "\n"
                        + describe());
            }
            synchronized (seen) {
                seen.add(line);
            }
            if (matches.test(line)) {
                return line;
            }
        }
    }

    /** Waits for the process to end and returns its exit status; fails if it does not end in time. */
    int awaitExit(Duration timeout) throws InterruptedException {
        if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            fail(name + ": still running after " + timeout + "\n" + describe());
        }
        // The exit can overtake the reader threads: let them reach the end of the output first.
        drained.await(10, TimeUnit.SECONDS);
        return process.exitValue();
    }

    /** Every stdout line read so far, including those {@link #awaitLine} skipped, plus the rest once ended. */
    List<String> stdout() {
        synchronized (seen) {
            List<String> all = new ArrayList<>(seen);
            for (String l : lines) {
                if (!l.equals(END)) {
                    all.add(l);
                }
            }
            return all;
        }
    }

    /** The process id, for {@code rds4j info --pid}. */
    long pid() {
        return process.pid();
    }

    String stderr() {
        return stderr.toString();
    }

    /**
     * SIGTERM, as a user's kill would send. Through the ProcessHandle: Process.destroy() also closes our ends of
     * the child's pipes, and the summary the child prints on SIGTERM would never be read.
     */
    void terminate() {
        process.toHandle().destroy();
    }

    String describe() {
        return "--- stdout:\n" + String.join("\n", stdout()) + "\n--- stderr:\n" + stderr();
    }

    @Override
    public void close() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(10, TimeUnit.SECONDS);
    }

    private static void pump(InputStream in, java.util.function.Consumer<String> sink, Runnable atEnd) {
        try (BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
            for (String line; (line = r.readLine()) != null; ) {
                sink.accept(line);
            }
        } catch (IOException e) {
            // The process was killed: its pipes close under us.
        } finally {
            atEnd.run();
        }
    }

    private void daemon(Runnable r, String stream) {
        Thread t = new Thread(r, name + "-" + stream);
        t.setDaemon(true);
        t.start();
    }
}
