package org.rds4j.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * CPU per message as a ratio to packed raw NIO's, and each contender's spreads beside the reference's own, in the CSV
 * (each run against the same run's reference, the medians against the reference's medians) and in the table.
 */
class ReferenceColumnsTest {
    /** A million messages in {@code nanos}, using {@code cpuNanos} of CPU: {@code cpuNanos / 1e9} CPU s per M. */
    private static CellResult cell(String contender, long nanos, long cpuNanos, long p50) {
        return new CellResult(contender, 64, null, 1_000_000, nanos, 0, cpuNanos, 100, p50, p50, p50);
    }

    @Test
    void cpuRatiosAndSpreadsStandBesidePackedNios() {
        // CPU s/M msgs: nio-packed 1.0, 2.0, 1.5 (median 1.5, spread 0.5/1.5); rds4j-tcp 3.0, 4.0, 3.3 (median 3.3).
        List<List<CellResult>> cells = List.of(
                List.of(cell("nio-packed", 1_000_000_000L, 1_000_000_000L, 20_000),
                        cell("rds4j-tcp", 2_000_000_000L, 3_000_000_000L, 40_000)),
                List.of(cell("nio-packed", 1_000_000_000L, 2_000_000_000L, 20_000),
                        cell("rds4j-tcp", 2_000_000_000L, 4_000_000_000L, 50_000)),
                List.of(cell("nio-packed", 1_000_000_000L, 1_500_000_000L, 20_000),
                        cell("rds4j-tcp", 2_000_000_000L, 3_300_000_000L, 40_000)));
        List<List<Row>> runs = new ArrayList<>();
        for (List<CellResult> run : cells) {
            runs.add(run.stream().map(Row::of).toList());
        }
        List<Row> medians = List.of(Row.median(List.of(cells.get(0).get(0), cells.get(1).get(0),
                cells.get(2).get(0))), Row.median(List.of(cells.get(0).get(1), cells.get(1).get(1),
                cells.get(2).get(1))));
        String[] lines = CsvReport.of(runs, medians).split("\n");
        List<String> header = List.of(lines[0].split(","));
        assertEquals(1 + 3 * 2 + 2, lines.length, String.join("\n", lines));

        // Run 1's rds4j-tcp line: against run 1's reference, 3.0 / 1.0; half its msgs/s; twice its p50.
        String[] run1 = lines[2].split(",", -1);
        assertEquals("rds4j-tcp", run1[header.indexOf("contender")]);
        assertEquals("3.000", run1[header.indexOf("cpu_x_nio")]);
        assertEquals("0.500", run1[header.indexOf("msgs_per_s_x_nio")]);
        assertEquals("2.000", run1[header.indexOf("rtt_p50_x_nio")]);
        assertEquals("2.000", lines[4].split(",", -1)[header.indexOf("cpu_x_nio")], "run 2: 4.0 / 2.0");
        // The reference's own lines have no ratio to themselves.
        assertEquals("", lines[1].split(",", -1)[header.indexOf("cpu_x_nio")]);

        // The medians: 3.3 / 1.5, and the spreads side by side.
        String[] median = lines[lines.length - 1].split(",", -1);
        assertEquals("median", median[0]);
        assertEquals("2.200", median[header.indexOf("cpu_x_nio")]);
        assertEquals("21.212", median[header.indexOf("cpu_spread_pct")], "0.7 / 3.3");
        assertEquals("33.333", median[header.indexOf("nio_cpu_spread_pct")], "0.5 / 1.5");
        assertEquals("0.000", median[header.indexOf("nio_msgs_per_s_spread_pct")]);
        assertEquals("25.000", median[header.indexOf("rtt_p50_spread_pct")], "10 / 40 us");
        assertEquals(median.length, header.size(), "one value per column");

        String table = ResultTable.of(medians).plain();
        for (String column : List.of("CPU x nio", "CPU +-%", "nio CPU +-%", "nio msgs/s +-%", "nio p50 +-%")) {
            assertTrue(table.contains(column), column + " missing:\n" + table);
        }
        String rds = table.lines().filter(l -> l.contains("rds4j-tcp")).findFirst().orElseThrow();
        assertTrue(rds.contains("2.20") && rds.contains("21.2") && rds.contains("33.3"), rds);
    }
}
