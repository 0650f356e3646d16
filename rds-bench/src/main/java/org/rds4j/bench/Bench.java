package org.rds4j.bench;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.rds4j.tools.ThreadPlacement;

/**
 * Runs the whole table (every size, every contender) as many times as asked, printing each run's table and, for
 * several runs, the medians with their spreads and the stability check.
 */
final class Bench {
    /** The stability criterion: rds4j's 64 B msgs/s and RTT p50 stay within this of their median. */
    static final double STABLE_PCT = 15;

    /** Every cell of every run, and the rows reported. */
    record Outcome(List<List<CellResult>> cells, List<List<Row>> runs, List<Row> medians) {
        boolean allOk() {
            return cells.stream().flatMap(List::stream).allMatch(CellResult::ok);
        }

        /** The rows of the final table: the medians with several runs, else the one run's. */
        List<Row> reported() {
            return runs.size() > 1 ? medians : runs.get(0);
        }
    }

    private Bench() {
    }

    static Outcome run(BenchOptions o, PrintStream out, PrintStream progress) {
        return run(o, null, out, progress);
    }

    /** {@code placement} places each cell's threads ({@code --pin}), or {@code null} leaves them to the scheduler. */
    static Outcome run(BenchOptions o, ThreadPlacement placement, PrintStream out, PrintStream progress) {
        List<Contender> contenders = Contenders.select(o.only);
        CellRunner runner = new CellRunner(o.settings(), placement);
        out.println("rds4j bench: sizes " + o.sizes.stream().map(Sizes::format).toList() + ", " + o.runs
                + " run(s), " + (o.quick ? "quick" : o.count > 0 ? o.count + " messages per phase"
                        : String.format(Locale.ROOT, "%.2f s per throughput phase", o.durationNanos / 1e9))
                + (placement == null ? "" : ", side A pinned to CPU " + placement.cpu(true) + " and side B to CPU "
                        + placement.cpu(false)));
        for (Contender c : contenders) {
            out.println("  " + c.name() + ": " + c.description());
        }
        out.flush();
        List<List<CellResult>> cells = new ArrayList<>();
        List<List<Row>> runs = new ArrayList<>();
        for (int run = 1; run <= o.runs; run++) {
            List<CellResult> results = new ArrayList<>();
            for (int size : o.sizes) {
                for (Contender c : contenders) {
                    long t0 = System.nanoTime();
                    CellResult r = runner.run(c, size);
                    results.add(r);
                    progress.printf(Locale.ROOT, "bench: run %d/%d %-8s %-15s %s (%.1f s)%n", run, o.runs,
                            Sizes.format(size), c.name(), r.ok() ? String.format(Locale.ROOT, "%,.0f msgs/s",
                                    r.msgsPerSecond()) : "FAILED: " + r.error(), (System.nanoTime() - t0) / 1e9);
                    if (o.threads && r.ok()) {
                        ThreadCpuMeter.describe(runner.lastThreadCpu(), r.nanos(), r.messages(), r.cpuNanos())
                                .forEach(progress::println);
                        AllocationMeter.describe(runner.lastThreadAllocation(), r.messages()).forEach(progress::println);
                        CounterDeltas.describe(runner.lastCounters(), r.messages()).forEach(progress::println);
                    }
                    progress.flush();
                }
            }
            cells.add(results);
            List<Row> rows = results.stream().map(Row::of).toList();
            runs.add(rows);
            out.println();
            out.println("run " + run + " of " + o.runs + ":");
            out.print(ResultTable.of(rows).plain());
            ResultTable.failures(rows).forEach(out::println);
            out.flush();
        }
        List<Row> medians = medians(cells);
        if (o.runs > 1) {
            out.println();
            out.println("medians of " + o.runs + " runs (+-%: largest distance of a run from the median):");
            out.print(ResultTable.of(medians).plain());
            for (String line : stability(medians)) {
                out.println(line);
            }
        }
        out.flush();
        return new Outcome(cells, runs, medians);
    }

    private static List<Row> medians(List<List<CellResult>> cells) {
        Map<String, List<CellResult>> byCell = new LinkedHashMap<>();
        for (List<CellResult> run : cells) {
            for (CellResult r : run) {
                byCell.computeIfAbsent(r.size() + "/" + r.contender(), k -> new ArrayList<>()).add(r);
            }
        }
        List<Row> out = new ArrayList<>();
        for (List<CellResult> cell : byCell.values()) {
            out.add(Row.median(cell));
        }
        return out;
    }

    /**
     * The stability check, for rds4j's contenders at 64 B, each line with the spread raw NIO had in the same
     * runs (packed NIO's msgs/s and blocking NIO's RTT p50, the references of the ratios): a spread the physical
     * reference shares is the machine's, not rds4j's.
     */
    static List<String> stability(List<Row> medians) {
        List<String> out = new ArrayList<>();
        Row packed = find(medians, Contenders.REFERENCE, 64);
        Row perMessage = find(medians, Contenders.PER_MESSAGE_REFERENCE, 64);
        List<String> spreads = new ArrayList<>();          // only the references that ran: --only may leave one out
        if (packed != null) {
            spreads.add(String.format(Locale.ROOT, "nio-packed msgs/s +-%.1f %%", packed.msgsSpreadPct()));
        }
        if (perMessage != null) {
            spreads.add(String.format(Locale.ROOT, "nio-per-msg RTT p50 +-%.1f %%", perMessage.p50SpreadPct()));
        }
        String reference = spreads.isEmpty() ? "" : " (raw NIO in the same runs: " + String.join(", ", spreads) + ")";
        for (Row r : medians) {
            if (r.size() == 64 && r.contender().startsWith("rds4j") && r.ok()) {
                boolean stable = r.msgsSpreadPct() <= STABLE_PCT && r.p50SpreadPct() <= STABLE_PCT;
                // The reference swings too: how far the contender's msgs/s spread is above (or below) its own.
                String against = packed == null ? "" : String.format(Locale.ROOT, "; msgs/s spread %+.1f points"
                        + " against nio-packed's", r.msgsSpreadPct() - packed.msgsSpreadPct());
                out.add(String.format(Locale.ROOT, "stability %s 64 B over %d runs: msgs/s +-%.1f %%, RTT p50 "
                        + "+-%.1f %%: %s%s%s", r.contender(), r.runs(), r.msgsSpreadPct(), r.p50SpreadPct(),
                        stable ? "within +-15 %" : "NOT within +-15 %", reference, against));
            }
        }
        return out;
    }

    private static Row find(List<Row> rows, String contender, int size) {
        for (Row r : rows) {
            if (r.size() == size && r.contender().equals(contender) && r.ok()) {
                return r;
            }
        }
        return null;
    }
}
