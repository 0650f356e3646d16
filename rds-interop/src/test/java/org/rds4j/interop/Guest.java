package org.rds4j.interop;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The Linux guest, driven through {@code interop/linux/harness.sh}. This JVM already runs inside the guest's
 * network namespace (the suite's {@code netns-jvm/bin/java} wrapper put it there), so rds4j stacks created here talk to
 * the guest's kernel directly at {@link #address()}.
 */
final class Guest {
    /** What a harness call printed and how it ended. */
    record Result(int exitCode, String output) {
        boolean ok() {
            return exitCode == 0;
        }

        @Override
        public String toString() {
            return "exit " + exitCode + ":\n" + output;
        }
    }

    private Guest() {
    }

    /** Whether the suite runs with a guest; without one every scenario is skipped. */
    static boolean available() {
        return System.getenv("RDS4J_HARNESS") != null && System.getenv("RDS4J_GUEST_ADDR") != null;
    }

    static String address() {
        return System.getenv("RDS4J_GUEST_ADDR");
    }

    /** Runs shell text in the guest and waits for it (bounded by {@code timeout}). */
    static Result run(String shell, Duration timeout) {
        return harness(timeout.plusSeconds(20), "guest", shell);
    }

    /** Starts shell text as a background job {@code name} in the guest. */
    static void start(String name, String shell) {
        Result r = harness(Duration.ofSeconds(30), "guest-bg", name, shell);
        if (!r.ok()) {
            throw new AssertionError("could not start " + name + " in the guest: " + r);
        }
    }

    /** Waits until job {@code name} printed a line matching {@code regex}. */
    static void expect(String name, String regex, Duration timeout) {
        Result r = harness(timeout.plusSeconds(20), "guest-expect", name, regex,
                String.valueOf(timeout.toSeconds()));
        if (!r.ok()) {
            throw new AssertionError(name + " never printed /" + regex + "/: " + r);
        }
    }

    /** Waits for job {@code name} to end; its exit code and output. */
    static Result await(String name, Duration timeout) {
        return harness(timeout.plusSeconds(20), "guest-wait", name, String.valueOf(timeout.toSeconds()));
    }

    /** Stops job {@code name} (TERM, then KILL). */
    static Result kill(String name) {
        return harness(Duration.ofSeconds(30), "guest-kill", name);
    }

    /** The guest kernel's log. */
    static String dmesg() {
        return harness(Duration.ofSeconds(30), "dmesg").output();
    }

    /** The guest's lines about RDS that say something went wrong. */
    static List<String> rdsComplaints(String dmesg) {
        List<String> bad = new ArrayList<>();
        for (String line : dmesg.split("\n")) {
            String l = line.toLowerCase();
            boolean rds = l.contains("rds");
            boolean trouble = l.contains("error") || l.contains("warn") || l.contains("fail") || l.contains("bug")
                    || l.contains("unknown") || l.contains("bad ") || l.contains("drop");
            if ((rds && trouble) || l.contains("call trace") || l.contains("bug:") || l.contains("warning:")) {
                bad.add(line);
            }
        }
        return bad;
    }

    private static Result harness(Duration timeout, String... args) {
        List<String> cmd = new ArrayList<>();
        cmd.add(System.getenv("RDS4J_HARNESS"));
        cmd.addAll(List.of(args));
        return exec(cmd, timeout);
    }

    /** Runs a program of this (namespace's) host, bounded by {@code timeout}; stdout and stderr together. */
    static Result exec(List<String> cmd, Duration timeout) {
        try {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            Thread reader = new Thread(() -> copy(p.getInputStream(), out), "harness-output");
            reader.setDaemon(true);
            reader.start();
            if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                reader.join(5_000);
                return new Result(124, out.toString(StandardCharsets.UTF_8) + "\n[timed out after " + timeout + "]");
            }
            reader.join(5_000);
            return new Result(p.exitValue(), out.toString(StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        }
    }

    private static void copy(InputStream in, ByteArrayOutputStream out) {
        try (in) {
            in.transferTo(out);
        } catch (IOException ignored) {
            // the process is gone; what was read is kept
        }
    }
}
