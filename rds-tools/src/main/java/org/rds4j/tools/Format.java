package org.rds4j.tools;

import java.util.Locale;

/** Number formatting for the summary lines, fixed to the root locale so that scripts can parse them. */
final class Format {
    private Format() {
    }

    static String seconds(long nanos) {
        return String.format(Locale.ROOT, "%.2f s", nanos / 1e9);
    }

    /** Events per second over {@code nanos}, rounded to a whole number. */
    static long perSecond(long count, long nanos) {
        return nanos <= 0 ? 0 : Math.round(count * 1e9 / nanos);
    }

    /** Megabytes (10^6 bytes) per second over {@code nanos}. */
    static String megabytesPerSecond(long bytes, long nanos) {
        return String.format(Locale.ROOT, "%.2f MB/s", nanos <= 0 ? 0.0 : bytes * 1e3 / nanos);
    }

    static long micros(long nanos) {
        return Math.round(nanos / 1e3);
    }
}
