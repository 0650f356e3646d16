package org.rds4j.bench;

import java.util.List;
import java.util.Locale;

/** Every cell as one CSV line: each run's cells, then (with several runs) the medians, marked {@code median}. */
final class CsvReport {
    static final String HEADER = "run,size_bytes,contender,ok,msgs_per_s,mb_per_s,rtt_p50_us,rtt_p99_us,rtt_p999_us,"
            + "alloc_bytes_per_msg,cpu_s_per_million_msgs,msgs_per_s_spread_pct,rtt_p50_spread_pct,error";

    private CsvReport() {
    }

    static String of(List<List<Row>> runs, List<Row> medians) {
        StringBuilder b = new StringBuilder(HEADER).append('\n');
        for (int i = 0; i < runs.size(); i++) {
            for (Row r : runs.get(i)) {
                line(b, String.valueOf(i + 1), r);
            }
        }
        if (runs.size() > 1) {
            for (Row r : medians) {
                line(b, "median", r);
            }
        }
        return b.toString();
    }

    private static void line(StringBuilder b, String run, Row r) {
        b.append(run).append(',').append(r.size()).append(',').append(r.contender()).append(',').append(r.ok());
        for (double v : new double[] {r.msgsPerSecond(), r.megabytesPerSecond(), r.p50Micros(), r.p99Micros(),
                r.p999Micros(), r.allocatedPerMessage(), r.cpuSecondsPerMillion(), r.msgsSpreadPct(),
                r.p50SpreadPct()}) {
            b.append(',').append(Double.isNaN(v) ? "" : String.format(Locale.ROOT, "%.3f", v));
        }
        b.append(',');
        if (r.error() != null) {
            b.append('"').append(r.error().replace("\"", "\"\"").replace('\n', ' ')).append('"');
        }
        b.append('\n');
    }
}
