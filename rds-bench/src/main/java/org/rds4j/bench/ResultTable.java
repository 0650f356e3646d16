package org.rds4j.bench;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The comparison table: one line per size and contender, with the ratios it is judged by. Every contender's
 * msgs/s, RTT p50 and CPU are also given as a ratio to packed raw NIO at the same size (the physical reference: above
 * 1 means more msgs/s, or a longer RTT, or more CPU, than the reference); rds4j's loopback transport's msgs/s also
 * as a ratio to Aeron IPC, and a busy-polling rds4j stack's RTT p50 as a ratio to busy-spinning raw NIO's (the
 * low-latency comparison: each side of the round trip spinning instead of sleeping), as is that of raw NIO with
 * rds4j's hand-offs polling the same way ({@code nio-handoff-spin}: for small messages, the floor of that ratio for
 * threading that hands messages to I/O threads, which busy-poll rds4j no longer does for replies over TCP). With several runs the lines are medians, and the spreads of msgs/s, RTT p50 and CPU each stand
 * beside packed raw NIO's own at the same size (the reference swings from run to run too, so a contender's spread
 * means something only next to it).
 */
final class ResultTable {
    private ResultTable() {
    }

    static TextTable of(List<Row> rows) {
        boolean spreads = rows.stream().anyMatch(r -> r.runs() > 1);
        List<String> header = new ArrayList<>(List.of("size", "contender", "msgs/s", "MB/s", "RTT p50 us",
                "p99 us", "p99.9 us", "B/msg", "CPU s/M msgs", "msgs/s x nio", "p50 x nio", "CPU x nio",
                "msgs/s x aeron-ipc", "p50 x nio-spin"));
        if (spreads) {
            header.addAll(List.of("msgs/s +-%", "nio msgs/s +-%", "p50 +-%", "nio p50 +-%", "CPU +-%",
                    "nio CPU +-%"));
        }
        TextTable t = new TextTable(header);
        Map<Integer, Row> reference = references(rows);
        Map<Integer, Row> aeronIpc = new HashMap<>();
        Map<Integer, Row> nioSpin = new HashMap<>();
        for (Row r : rows) {
            if (r.contender().equals(Contenders.AERON_IPC) && r.ok()) {
                aeronIpc.put(r.size(), r);
            }
            if (r.contender().equals(Contenders.SPIN_REFERENCE) && r.ok()) {
                nioSpin.put(r.size(), r);
            }
        }
        for (Row r : rows) {
            List<String> cells = new ArrayList<>();
            cells.add(Sizes.format(r.size()));
            cells.add(r.contender());
            if (!r.ok()) {
                cells.add("FAILED");
                while (cells.size() < header.size()) {
                    cells.add("");
                }
                t.add(cells);
                continue;
            }
            cells.add(fixed(r.msgsPerSecond(), 0));
            cells.add(fixed(r.megabytesPerSecond(), 1));
            cells.add(fixed(r.p50Micros(), 1));
            cells.add(fixed(r.p99Micros(), 1));
            cells.add(fixed(r.p999Micros(), 1));
            cells.add(fixed(r.allocatedPerMessage(), 0));
            cells.add(fixed(r.cpuSecondsPerMillion(), 2));
            Row ref = r.contender().equals(Contenders.REFERENCE) ? null : reference.get(r.size());
            cells.add(ratio(r.msgsPerSecond(), ref == null ? Double.NaN : ref.msgsPerSecond()));
            cells.add(ratio(r.p50Micros(), ref == null ? Double.NaN : ref.p50Micros()));
            cells.add(ratio(r.cpuSecondsPerMillion(), ref == null ? Double.NaN : ref.cpuSecondsPerMillion()));
            Row ipc = r.contender().startsWith("rds4j-loopback") ? aeronIpc.get(r.size()) : null;
            cells.add(ratio(r.msgsPerSecond(), ipc == null ? Double.NaN : ipc.msgsPerSecond()));
            boolean polls = r.contender().endsWith("-busypoll") || r.contender().equals(Contenders.HANDOFF_SPIN);
            Row spin = polls ? nioSpin.get(r.size()) : null;
            cells.add(ratio(r.p50Micros(), spin == null ? Double.NaN : spin.p50Micros()));
            if (spreads) {
                cells.add(fixed(r.msgsSpreadPct(), 1));
                cells.add(ref == null ? "" : fixed(ref.msgsSpreadPct(), 1));
                cells.add(fixed(r.p50SpreadPct(), 1));
                cells.add(ref == null ? "" : fixed(ref.p50SpreadPct(), 1));
                cells.add(fixed(r.cpuSpreadPct(), 1));
                cells.add(ref == null ? "" : fixed(ref.cpuSpreadPct(), 1));
            }
            t.add(cells);
        }
        return t;
    }

    /** Packed raw NIO's line at each size, among {@code rows} (one run's, or the medians). */
    static Map<Integer, Row> references(List<Row> rows) {
        Map<Integer, Row> reference = new HashMap<>();
        for (Row r : rows) {
            if (r.contender().equals(Contenders.REFERENCE) && r.ok()) {
                reference.put(r.size(), r);
            }
        }
        return reference;
    }

    /** {@code v / reference}, or NaN when either is missing or the reference is 0. */
    static double ratioOf(double v, double reference) {
        return Double.isNaN(v) || Double.isNaN(reference) || reference == 0 ? Double.NaN : v / reference;
    }

    /** One line per failed cell, to print under the table (the table itself only says FAILED). */
    static List<String> failures(List<Row> rows) {
        List<String> out = new ArrayList<>();
        for (Row r : rows) {
            if (!r.ok()) {
                out.add("FAILED " + Sizes.format(r.size()) + " " + r.contender() + ": " + r.error());
            }
        }
        return out;
    }

    static String fixed(double v, int decimals) {
        return Double.isNaN(v) ? "-" : String.format(Locale.ROOT, "%." + decimals + "f", v);
    }

    private static String ratio(double v, double reference) {
        double q = ratioOf(v, reference);
        return Double.isNaN(q) ? "" : String.format(Locale.ROOT, "%.2f", q);
    }
}
