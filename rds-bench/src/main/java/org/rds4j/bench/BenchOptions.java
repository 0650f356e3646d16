package org.rds4j.bench;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** The command line of {@code rds4j bench}. */
final class BenchOptions {
    static final String USAGE = ""
            + "usage: rds4j bench [OPTIONS]\n"
            + "       rds4j bench --jmh [JMH OPTIONS]   (the JMH microbenchmarks; --jmh -h lists JMH's options)\n\n"
            + "rds4j against raw NIO, Netty and Aeron in one JVM: for each message size and contender, one-way\n"
            + "throughput with every message checked, ping-pong RTT percentiles, bytes allocated per message over all\n"
            + "threads and CPU seconds per million messages. Exits 1 if any cell failed.\n\n"
            + "  --sizes LIST      message sizes (default 64,1K,8K,64K,1M)\n"
            + "  --only LIST       contenders (default all): " + String.join(",", names()) + "\n"
            + "  --duration S      seconds of each throughput phase, half for round trips (default 1)\n"
            + "  --warmup S        seconds of warm-up per cell (default 0.5)\n"
            + "  --count N         fixed messages per throughput phase and round trips, instead of --duration\n"
            + "  --runs N          repeat the whole table N times; with N > 1 also medians and spreads (default 1)\n"
            + "  --csv FILE        write every cell as CSV\n"
            + "  --svg FILE        write a bar chart of msgs/s\n"
            + "  --markdown FILE   write the report (docs/performance.md); the chart goes beside it unless --svg;\n"
            + "                    the file's hand-written sections after its marker line are kept (docs/tools.md)\n"
            + "  --note TEXT       a remark for the report, such as where it ran\n"
            + "  --pin             Linux: each side's threads (harness and its host's I/O threads) on a core of its\n"
            + "                    own, through taskset, for runs that agree with each other (docs/tools.md)\n"
            + "  --threads         after each cell, the CPU each thread used in its throughput phase (share of a\n"
            + "                    core and ns per message) and the bytes each allocated: where the cell's CPU and\n"
            + "                    allocations went\n"
            + "  --quick           tiny counts and warm-ups: checks that everything works, measures nothing\n";

    List<Integer> sizes = Sizes.DEFAULT;
    List<String> only = List.of();
    long durationNanos = TimeUnit.SECONDS.toNanos(1);
    long warmupNanos = TimeUnit.MILLISECONDS.toNanos(500);
    long count;
    int runs = 1;
    Path csv;
    Path svg;
    Path markdown;
    String note;
    boolean quick;
    boolean pin;
    boolean threads;
    boolean help;
    boolean jmh;
    String[] jmhArgs = new String[0];

    static BenchOptions parse(String[] argv) {
        BenchOptions o = new BenchOptions();
        for (int i = 0; i < argv.length; i++) {
            String arg = argv[i];
            switch (arg) {
                case "--help", "-h" -> o.help = true;
                case "--quick" -> o.quick = true;
                case "--pin" -> o.pin = true;
                case "--threads" -> o.threads = true;
                case "--jmh" -> {
                    o.jmh = true;
                    o.jmhArgs = Arrays.copyOfRange(argv, i + 1, argv.length);
                    return o;
                }
                case "--sizes" -> o.sizes = Sizes.parseList(value(argv, ++i, arg));
                case "--only" -> o.only = list(value(argv, ++i, arg));
                case "--duration" -> o.durationNanos = seconds(value(argv, ++i, arg), arg, 0.001);
                case "--warmup" -> o.warmupNanos = seconds(value(argv, ++i, arg), arg, 0);
                case "--count" -> o.count = positive(value(argv, ++i, arg), arg, 1_000_000_000L);
                case "--runs" -> o.runs = (int) positive(value(argv, ++i, arg), arg, 1000);
                case "--csv" -> o.csv = Path.of(value(argv, ++i, arg));
                case "--svg" -> o.svg = Path.of(value(argv, ++i, arg));
                case "--markdown" -> o.markdown = Path.of(value(argv, ++i, arg));
                case "--note" -> o.note = value(argv, ++i, arg);
                default -> throw new IllegalArgumentException("unknown option '" + arg + "'");
            }
        }
        Contenders.select(o.only); // Rejects unknown names before anything runs.
        return o;
    }

    Settings settings() {
        return new Settings(warmupNanos, durationNanos, count, quick);
    }

    private static List<String> names() {
        List<String> n = new ArrayList<>();
        for (Contender c : Contenders.all()) {
            n.add(c.name());
        }
        return n;
    }

    private static String value(String[] argv, int i, String option) {
        if (i >= argv.length) {
            throw new IllegalArgumentException(option + " needs a value");
        }
        return argv[i];
    }

    private static List<String> list(String text) {
        List<String> out = new ArrayList<>();
        for (String s : text.split(",")) {
            if (!s.isBlank()) {
                out.add(s.trim());
            }
        }
        return out;
    }

    private static long seconds(String text, String option, double min) {
        double s;
        try {
            s = Double.parseDouble(text);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(option + " needs seconds, not '" + text + "'", e);
        }
        if (!(s >= min) || s > 3600) {
            throw new IllegalArgumentException(option + " must be " + min + " to 3600 seconds, not " + text);
        }
        return (long) (s * 1e9);
    }

    private static long positive(String text, String option, long max) {
        long v;
        try {
            v = Long.parseLong(text);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(option + " needs a number, not '" + text + "'", e);
        }
        if (v < 1 || v > max) {
            throw new IllegalArgumentException(option + " must be 1 to " + max + ", not " + text);
        }
        return v;
    }
}
