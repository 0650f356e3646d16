package org.rds4j.bench;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * {@code --threads}: how a contender's own counters ({@link Link#counters}) moved in a throughput phase, per side, so
 * that a cell's rate comes with what the stack did for it: who wrote and read (an rds4j stack's {@code caller_passes}
 * and {@code caller_reads} against its I/O threads' work), how often senders waited for budget
 * ({@code send_queue_full}), how many acknowledgements went on their own ({@code ack_sent}).
 */
final class CounterDeltas {
    /** One counter that moved: which side, its name, by how much. */
    record Delta(boolean sideA, String name, long delta) {
    }

    private CounterDeltas() {
    }

    /**
     * The counters that moved between two snapshots of one side, the most first, then by name.
     *
     * @param sideA  which side the snapshots are of
     * @param before the snapshot before the phase
     * @param after  the snapshot after it
     * @return the counters whose value changed
     */
    static List<Delta> between(boolean sideA, Map<String, Long> before, Map<String, Long> after) {
        List<Delta> out = new ArrayList<>();
        for (Map.Entry<String, Long> e : after.entrySet()) {
            long delta = e.getValue() - before.getOrDefault(e.getKey(), 0L);
            if (delta != 0) {
                out.add(new Delta(sideA, e.getKey(), delta));
            }
        }
        out.sort(Comparator.comparingLong((Delta d) -> -Math.abs(d.delta())).thenComparing(Delta::name));
        return out;
    }

    /**
     * Lines for the report of one cell's throughput phase: each counter that moved, side A's first, with its count
     * and its count per message; nothing if the contender keeps no counters.
     *
     * @param deltas   both sides' counters that moved ({@link #between})
     * @param messages the phase's messages
     * @return the lines, indented as {@code --threads}' others
     */
    static List<String> describe(List<Delta> deltas, long messages) {
        List<String> out = new ArrayList<>();
        if (deltas.isEmpty() || messages <= 0) {
            return out;
        }
        out.add("  counters that moved in the throughput phase (side a sends, side b receives): count, per message");
        for (boolean sideA : new boolean[] {true, false}) {
            for (Delta d : deltas) {
                if (d.sideA() == sideA) {
                    out.add(String.format(Locale.ROOT, "    %s %-30s %,14d %12.4f", sideA ? "a" : "b", d.name(),
                            d.delta(), (double) d.delta() / messages));
                }
            }
        }
        return out;
    }
}
