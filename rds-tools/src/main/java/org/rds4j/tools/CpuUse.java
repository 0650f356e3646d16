package org.rds4j.tools;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * rds-stress {@code -c}'s cpu column: the share of the machine's CPU time that was busy since the last sample, in
 * percent. rds-stress measures it by running a spinning process per CPU and counting how much spinning it lost; this
 * reads the same quantity from the aggregate {@code cpu} line of /proc/stat (everything but idle and iowait), which
 * does not load the machine. Where /proc/stat cannot be read the column is -1, as rds-stress prints without -c.
 */
final class CpuUse {
    private static final Path STAT = Path.of("/proc/stat");
    private long lastBusy = -1;
    private long lastTotal = -1;

    CpuUse() {
        sample();
    }

    /** Busy percent since the previous call, or -1 if unknown. */
    double sample() {
        long[] t = read();
        if (t == null) {
            return -1.0;
        }
        long busy = t[0];
        long total = t[1];
        double pct = lastTotal < 0 || total == lastTotal ? -1.0 : 100.0 * (busy - lastBusy) / (total - lastTotal);
        lastBusy = busy;
        lastTotal = total;
        return pct;
    }

    /** {busy, total} jiffies from the aggregate line, or null. */
    private static long[] read() {
        try {
            for (String line : Files.readAllLines(STAT, StandardCharsets.US_ASCII)) {
                if (!line.startsWith("cpu ")) {
                    continue;
                }
                String[] f = line.trim().split("\\s+");
                long total = 0;
                long idle = 0;
                // user nice system idle iowait irq softirq steal; guest time is already counted in user.
                for (int i = 1; i < f.length && i <= 8; i++) {
                    long v = Long.parseLong(f[i]);
                    total += v;
                    if (i == 4 || i == 5) {
                        idle += v;
                    }
                }
                return new long[] {total - idle, total};
            }
        } catch (IOException | RuntimeException e) {
            return null;
        }
        return null;
    }
}
