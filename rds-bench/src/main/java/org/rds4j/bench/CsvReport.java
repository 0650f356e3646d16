package org.rds4j.bench;

import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Every cell as one CSV line: each run's cells, then (with several runs) the medians, marked {@code median}. The
 * {@code _x_nio} columns divide by packed raw NIO's figure at the same size, in the same run (the median lines: by
 * its medians, as the table does); the {@code nio_..._spread_pct} columns repeat packed raw NIO's own spreads beside
 * each contender's.
 */
final class CsvReport {
    static final String HEADER = "run,size_bytes,contender,ok,msgs_per_s,mb_per_s,rtt_p50_us,rtt_p99_us,rtt_p999_us,"
            + "alloc_bytes_per_msg,cpu_s_per_million_msgs,msgs_per_s_spread_pct,rtt_p50_spread_pct,cpu_spread_pct,"
            + "msgs_per_s_x_nio,rtt_p50_x_nio,cpu_x_nio,nio_msgs_per_s_spread_pct,nio_rtt_p50_spread_pct,"
            + "nio_cpu_spread_pct,error";

    private CsvReport() {
    }

    static String of(List<List<Row>> runs, List<Row> medians) {
        StringBuilder b = new StringBuilder(HEADER).append('\n');
        for (int i = 0; i < runs.size(); i++) {
            Map<Integer, Row> reference = ResultTable.references(runs.get(i));
            for (Row r : runs.get(i)) {
                line(b, String.valueOf(i + 1), r, reference);
            }
        }
        if (runs.size() > 1) {
            Map<Integer, Row> reference = ResultTable.references(medians);
            for (Row r : medians) {
                line(b, "median", r, reference);
            }
        }
        return b.toString();
    }

    private static void line(StringBuilder b, String run, Row r, Map<Integer, Row> references) {
        b.append(run).append(',').append(r.size()).append(',').append(r.contender()).append(',').append(r.ok());
        Row ref = r.contender().equals(Contenders.REFERENCE) ? null : references.get(r.size());
        double n = Double.NaN;
        for (double v : new double[] {r.msgsPerSecond(), r.megabytesPerSecond(), r.p50Micros(), r.p99Micros(),
                r.p999Micros(), r.allocatedPerMessage(), r.cpuSecondsPerMillion(), r.msgsSpreadPct(),
                r.p50SpreadPct(), r.cpuSpreadPct(),
                ResultTable.ratioOf(r.msgsPerSecond(), ref == null ? n : ref.msgsPerSecond()),
                ResultTable.ratioOf(r.p50Micros(), ref == null ? n : ref.p50Micros()),
                ResultTable.ratioOf(r.cpuSecondsPerMillion(), ref == null ? n : ref.cpuSecondsPerMillion()),
                ref == null ? n : ref.msgsSpreadPct(), ref == null ? n : ref.p50SpreadPct(),
                ref == null ? n : ref.cpuSpreadPct()}) {
            b.append(',').append(Double.isNaN(v) ? "" : String.format(Locale.ROOT, "%.3f", v));
        }
        b.append(',');
        if (r.error() != null) {
            b.append('"').append(r.error().replace("\"", "\"\"").replace('\n', ' ')).append('"');
        }
        b.append('\n');
    }
}
