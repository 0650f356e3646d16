package org.rds4j.bench;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.function.ToDoubleFunction;

/**
 * One line of a report: a cell's figures in report units, from one run or as the median over several runs (with the
 * spread of msgs/s, RTT p50 and CPU per message). Missing figures are NaN.
 *
 * @param msgsSpreadPct the largest distance of a run's msgs/s from the median, in % of the median (NaN for one run)
 * @param p50SpreadPct the same for the RTT p50
 * @param cpuSpreadPct the same for the CPU seconds per million messages
 */
public record Row(String contender, int size, String error, double msgsPerSecond, double megabytesPerSecond,
        double p50Micros, double p99Micros, double p999Micros, double allocatedPerMessage, double cpuSecondsPerMillion,
        double msgsSpreadPct, double p50SpreadPct, double cpuSpreadPct, int runs) {

    public boolean ok() {
        return error == null;
    }

    static Row of(CellResult r) {
        if (!r.ok()) {
            return failed(r.contender(), r.size(), r.error(), 1);
        }
        return new Row(r.contender(), r.size(), null, r.msgsPerSecond(), r.megabytesPerSecond(), r.rttP50() / 1e3,
                r.rttP99() / 1e3, r.rttP999() / 1e3, orNaN(r.allocatedPerMessage()), orNaN(r.cpuSecondsPerMillion()),
                Double.NaN, Double.NaN, Double.NaN, 1);
    }

    /** The median of one cell over several runs; failed if any run failed (a flaky cell is not a figure). */
    static Row median(List<CellResult> runs) {
        CellResult first = runs.get(0);
        for (CellResult r : runs) {
            if (!r.ok()) {
                return failed(first.contender(), first.size(), r.error(), runs.size());
            }
        }
        List<Row> rows = new ArrayList<>();
        for (CellResult r : runs) {
            rows.add(of(r));
        }
        double msgs = median(rows, Row::msgsPerSecond);
        double p50 = median(rows, Row::p50Micros);
        double cpu = median(rows, Row::cpuSecondsPerMillion);
        return new Row(first.contender(), first.size(), null, msgs, median(rows, Row::megabytesPerSecond), p50,
                median(rows, Row::p99Micros), median(rows, Row::p999Micros), median(rows, Row::allocatedPerMessage),
                cpu, spread(rows, Row::msgsPerSecond, msgs), spread(rows, Row::p50Micros, p50),
                spread(rows, Row::cpuSecondsPerMillion, cpu), runs.size());
    }

    private static Row failed(String contender, int size, String error, int runs) {
        double n = Double.NaN;
        return new Row(contender, size, error, n, n, n, n, n, n, n, n, n, n, runs);
    }

    private static double orNaN(double v) {
        return v < 0 ? Double.NaN : v;
    }

    static double median(List<Row> rows, ToDoubleFunction<Row> f) {
        List<Double> v = new ArrayList<>();
        for (Row r : rows) {
            v.add(f.applyAsDouble(r));
        }
        Collections.sort(v);
        int n = v.size();
        return n % 2 == 1 ? v.get(n / 2) : (v.get(n / 2 - 1) + v.get(n / 2)) / 2;
    }

    private static double spread(List<Row> rows, ToDoubleFunction<Row> f, double median) {
        double worst = 0;
        for (Row r : rows) {
            worst = Math.max(worst, Math.abs(f.applyAsDouble(r) - median));
        }
        return median == 0 ? Double.NaN : 100 * worst / median;
    }
}
