package org.rds4j.bench;

import java.util.ArrayList;
import java.util.List;

/** A table of strings, printed aligned for a terminal or as a Markdown table. */
final class TextTable {
    private final List<String> header;
    private final List<List<String>> rows = new ArrayList<>();

    TextTable(List<String> header) {
        this.header = header;
    }

    void add(List<String> row) {
        rows.add(row);
    }

    String plain() {
        int[] w = new int[header.size()];
        for (int i = 0; i < w.length; i++) {
            w[i] = header.get(i).length();
            for (List<String> r : rows) {
                w[i] = Math.max(w[i], r.get(i).length());
            }
        }
        StringBuilder b = new StringBuilder();
        line(b, header, w);
        for (List<String> r : rows) {
            line(b, r, w);
        }
        return b.toString();
    }

    private static void line(StringBuilder b, List<String> cells, int[] w) {
        for (int i = 0; i < cells.size(); i++) {
            String c = cells.get(i);
            // Text columns (the first two) to the left, numbers to the right.
            if (i < 2) {
                b.append(c).append(" ".repeat(w[i] - c.length()));
            } else {
                b.append(" ".repeat(w[i] - c.length())).append(c);
            }
            b.append(i + 1 < cells.size() ? "  " : "");
        }
        b.append('\n');
    }

    String markdown() {
        StringBuilder b = new StringBuilder();
        b.append("| ").append(String.join(" | ", header)).append(" |\n|");
        for (int i = 0; i < header.size(); i++) {
            b.append(i < 2 ? "---|" : "---:|");
        }
        b.append('\n');
        for (List<String> r : rows) {
            b.append("| ").append(String.join(" | ", r)).append(" |\n");
        }
        return b.toString();
    }
}
