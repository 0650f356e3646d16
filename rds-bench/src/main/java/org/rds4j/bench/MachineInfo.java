package org.rds4j.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * What the report records about where it ran: CPUs, memory, OS and kernel, the kernel's TCP settings that move the
 * TCP cells, JDK, and the git commit.
 */
final class MachineInfo {
    private MachineInfo() {
    }

    /** Markdown bullet lines. */
    static List<String> describe(Path checkout) {
        List<String> out = new ArrayList<>();
        out.add("CPUs (nproc): " + Runtime.getRuntime().availableProcessors());
        out.add("CPU model: " + firstValue(Path.of("/proc/cpuinfo"), "model name", ':').orElse("unknown"));
        out.add("memory: " + firstValue(Path.of("/proc/meminfo"), "MemTotal", ':').map(MachineInfo::memory)
                .orElse("unknown"));
        out.add("OS: " + firstValue(Path.of("/etc/os-release"), "PRETTY_NAME", '=').map(s -> s.replace("\"", ""))
                .orElse(System.getProperty("os.name")) + ", kernel " + System.getProperty("os.name") + " "
                + System.getProperty("os.version") + " " + System.getProperty("os.arch"));
        tcp().ifPresent(t -> out.add("TCP: " + t));
        out.add("JDK: " + System.getProperty("java.vm.vendor") + " " + System.getProperty("java.vm.name") + " "
                + System.getProperty("java.runtime.version"));
        out.add("git commit: " + gitCommit(checkout));
        return out;
    }

    /**
     * Linux's congestion control and socket buffer limits, which every TCP contender runs with (none sets its own
     * algorithm): on the project's 2-core machine {@code nio-packed} moved about four times as many 64 KiB messages
     * with cubic as with BBR.
     */
    private static java.util.Optional<String> tcp() {
        java.util.Optional<String> cc = sysctl("net/ipv4/tcp_congestion_control");
        if (cc.isEmpty()) {
            return cc;
        }
        return java.util.Optional.of("congestion control " + cc.get() + ", tcp_wmem "
                + sysctl("net/ipv4/tcp_wmem").orElse("unknown") + ", tcp_rmem "
                + sysctl("net/ipv4/tcp_rmem").orElse("unknown"));
    }

    private static java.util.Optional<String> sysctl(String name) {
        try {
            // One buffered read: a sysctl file read in pieces (as Files.readString does it) ends after its first byte.
            String value = String.join(" ", Files.readAllLines(Path.of("/proc/sys", name), StandardCharsets.UTF_8));
            return java.util.Optional.of(value.trim().replaceAll("\\s+", " "));
        } catch (IOException | RuntimeException e) {
            return java.util.Optional.empty();              // not Linux, or not readable: left out
        }
    }

    private static java.util.Optional<String> firstValue(Path file, String key, char separator) {
        try {
            for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
                int sep = line.indexOf(separator);
                if (sep > 0 && line.substring(0, sep).trim().equals(key)) {
                    return java.util.Optional.of(line.substring(sep + 1).trim());
                }
            }
        } catch (IOException | RuntimeException e) {
            // Not Linux, or not readable: "unknown".
        }
        return java.util.Optional.empty();
    }

    private static String memory(String memTotal) {
        try {
            long kb = Long.parseLong(memTotal.replace("kB", "").trim());
            return String.format(Locale.ROOT, "%.1f GiB", kb / 1024.0 / 1024.0);
        } catch (NumberFormatException e) {
            return memTotal;
        }
    }

    /** The commit of the checkout, with "+ uncommitted changes" when the work tree differs from it. */
    static String gitCommit(Path checkout) {
        String head = run(checkout, "git", "rev-parse", "HEAD");
        if (head == null || head.isBlank()) {
            return "unknown (not a git checkout)";
        }
        String status = run(checkout, "git", "status", "--porcelain", "--untracked-files=no");
        return head.trim() + (status != null && !status.isBlank() ? " + uncommitted changes" : "");
    }

    private static String run(Path dir, String... command) {
        Path out = null;
        try {
            // Output to a file, so that the wait below is the only one and it is bounded.
            out = Files.createTempFile("rds4j-bench-git", ".txt");
            Process p = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true)
                    .redirectOutput(out.toFile()).start();
            p.getOutputStream().close();
            if (!p.waitFor(10, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return null;
            }
            return p.exitValue() == 0 ? Files.readString(out, StandardCharsets.UTF_8) : null;
        } catch (IOException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        } finally {
            if (out != null) {
                try {
                    Files.deleteIfExists(out);
                } catch (IOException ignored) {
                    // A temporary file left behind.
                }
            }
        }
    }
}
