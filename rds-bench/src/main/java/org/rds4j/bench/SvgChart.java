package org.rds4j.bench;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * A horizontal bar chart of msgs/s, written by hand (no charting library): one panel per message size, one bar per
 * contender, each panel scaled to its own fastest contender (the sizes differ by orders of magnitude, so one scale
 * would flatten the large sizes). The value is printed at each bar, so the chart needs no axis.
 */
final class SvgChart {
    private static final int WIDTH = 820;
    private static final int LABEL = 130;
    private static final int BAR_MAX = 460;
    private static final int BAR = 16;
    private static final int GAP = 4;
    private static final int PANEL_TITLE = 26;
    private static final String[] COLORS = {"#4e79a7", "#a0cbe8", "#f28e2b", "#59a14f", "#8cd17d", "#e15759",
        "#ff9d9a", "#b07aa1", "#9d7660", "#76b7b2"};

    private SvgChart() {
    }

    static String of(List<Row> rows, String title) {
        Map<Integer, List<Row>> bySize = new LinkedHashMap<>();
        List<String> contenders = new ArrayList<>();
        for (Row r : rows) {
            bySize.computeIfAbsent(r.size(), s -> new ArrayList<>()).add(r);
            if (!contenders.contains(r.contender())) {
                contenders.add(r.contender());
            }
        }
        StringBuilder body = new StringBuilder();
        int y = 40;
        for (Map.Entry<Integer, List<Row>> panel : bySize.entrySet()) {
            double max = 0;
            for (Row r : panel.getValue()) {
                if (r.ok()) {
                    max = Math.max(max, r.msgsPerSecond());
                }
            }
            body.append(text(10, y + 16, "bold", "msgs/s, " + Sizes.format(panel.getKey()) + " messages"));
            y += PANEL_TITLE;
            for (Row r : panel.getValue()) {
                String color = COLORS[contenders.indexOf(r.contender()) % COLORS.length];
                body.append(text(10, y + BAR - 4, "normal", r.contender()));
                if (r.ok() && max > 0) {
                    int w = (int) Math.max(1, Math.round(BAR_MAX * r.msgsPerSecond() / max));
                    body.append(String.format(Locale.ROOT,
                            "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\"/>%n", LABEL, y, w, BAR,
                            color));
                    body.append(text(LABEL + w + 6, y + BAR - 4, "normal",
                            String.format(Locale.ROOT, "%,.0f (%.1f MB/s)", r.msgsPerSecond(),
                                    r.megabytesPerSecond())));
                } else {
                    body.append(text(LABEL, y + BAR - 4, "normal", "failed"));
                }
                y += BAR + GAP;
            }
            y += 10;
        }
        StringBuilder svg = new StringBuilder();
        svg.append(String.format(Locale.ROOT, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
                + "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"12\">%n", WIDTH, y + 10, WIDTH,
                y + 10));
        svg.append(String.format(Locale.ROOT, "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>%n", WIDTH, y + 10));
        svg.append(text(10, 22, "bold", title));
        svg.append(body);
        svg.append("</svg>\n");
        return svg.toString();
    }

    private static String text(int x, int y, String weight, String s) {
        return String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" font-weight=\"%s\">%s</text>%n", x, y, weight,
                escape(s));
    }

    private static String escape(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
    }
}
