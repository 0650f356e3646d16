package org.rds4j.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/** Message sizes on the command line and in tables: {@code 64}, {@code 1K}/{@code 1KiB}, {@code 1M}/{@code 1MiB}. */
public final class Sizes {
    /** rds4j's (and the kernel's) largest message. */
    public static final int MAX = 1 << 20;
    public static final List<Integer> DEFAULT = List.of(64, 1 << 10, 8 << 10, 64 << 10, 1 << 20);

    private Sizes() {
    }

    public static List<Integer> parseList(String text) {
        List<Integer> out = new ArrayList<>();
        for (String part : text.split(",")) {
            if (!part.isBlank()) {
                out.add(parse(part.trim()));
            }
        }
        if (out.isEmpty()) {
            throw new IllegalArgumentException("--sizes needs at least one size");
        }
        return out;
    }

    public static int parse(String text) {
        String t = text.toUpperCase(Locale.ROOT).replace("IB", "").replace("B", "");
        int unit = 1;
        if (t.endsWith("K")) {
            unit = 1 << 10;
            t = t.substring(0, t.length() - 1);
        } else if (t.endsWith("M")) {
            unit = 1 << 20;
            t = t.substring(0, t.length() - 1);
        }
        long v;
        try {
            v = Long.parseLong(t) * unit;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("not a size: '" + text + "' (try 64, 1K, 8KiB, 1M)", e);
        }
        if (v < Payload.MIN_SIZE || v > MAX) {
            throw new IllegalArgumentException("sizes must be " + Payload.MIN_SIZE + " B to 1 MiB, not " + text);
        }
        return (int) v;
    }

    /** {@code 64 B}, {@code 8 KiB}, {@code 1 MiB}, or bytes when not a whole multiple. */
    public static String format(int size) {
        if (size >= 1 << 20 && size % (1 << 20) == 0) {
            return (size >> 20) + " MiB";
        }
        if (size >= 1 << 10 && size % (1 << 10) == 0) {
            return (size >> 10) + " KiB";
        }
        return size + " B";
    }
}
