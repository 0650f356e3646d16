package org.rds4j.bench;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.rds4j.tools.ThreadPlacement;

/**
 * {@code rds4j bench}: the comparison table (see {@link Bench}), or with {@code --jmh} the JMH microbenchmarks of
 * this module (everything after {@code --jmh} goes to JMH's own command line).
 */
public final class BenchMain {
    private BenchMain() {
    }

    public static void main(String[] argv) throws Exception {
        // The contenders' INFO logs would drown the table. An explicit -D still wins.
        if (System.getProperty("org.slf4j.simpleLogger.defaultLogLevel") == null) {
            System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
        }
        int status = run(argv, System.out, System.err);
        System.out.flush();
        System.err.flush();
        // exit() rather than return: a stray non-daemon thread of a contender must not keep the JVM alive.
        System.exit(status);
    }

    /** Runs a command line; returns the exit status (2 for usage errors, 1 if a cell failed). */
    static int run(String[] argv, PrintStream out, PrintStream err) throws Exception {
        BenchOptions o;
        try {
            o = BenchOptions.parse(argv);
        } catch (IllegalArgumentException e) {
            err.println("rds4j bench: " + e.getMessage());
            err.print(BenchOptions.USAGE);
            return 2;
        }
        if (o.help) {
            out.print(BenchOptions.USAGE);
            return 0;
        }
        if (o.jmh) {
            org.openjdk.jmh.Main.main(o.jmhArgs);
            return 0;
        }
        // Read before the run: the report describes the code that was measured, and the files it writes at the end
        // (docs/performance.svg first) would otherwise count as uncommitted changes.
        List<String> machine = o.markdown != null
                ? MachineInfo.describe(Path.of(System.getProperty("rds4j.root", "."))) : List.of();
        ThreadPlacement placement = null;
        if (o.pin) {
            try {
                placement = ThreadPlacement.onThisMachine();
            } catch (IllegalStateException e) {
                err.println("rds4j bench: " + e.getMessage());
                return 2;
            }
        }
        Bench.Outcome outcome = Bench.run(o, placement, out, err);
        write(outcome, o, argv, machine, out);
        if (!outcome.allOk()) {
            err.println("rds4j bench: some cells FAILED (see the table)");
            return 1;
        }
        return 0;
    }

    private static void write(Bench.Outcome outcome, BenchOptions o, String[] argv, List<String> machine,
            PrintStream out) throws IOException {
        String csv = CsvReport.of(outcome.runs(), outcome.medians());
        if (o.csv != null) {
            writeFile(o.csv, csv, out);
        }
        Path svg = o.svg;
        if (svg == null && o.markdown != null) {
            String name = o.markdown.getFileName().toString().replaceFirst("\\.md$", "") + ".svg";
            svg = o.markdown.resolveSibling(name);
        }
        if (svg != null) {
            String title = "rds4j bench" + (outcome.runs().size() > 1 ? " (median of " + outcome.runs().size()
                    + " runs)" : "") + ": messages per second, longer is better";
            writeFile(svg, SvgChart.of(outcome.reported(), title), out);
        }
        if (o.markdown != null) {
            String command = System.getProperty("rds4j.bench.command", "rds4j bench " + String.join(" ", argv));
            Path base = o.markdown.toAbsolutePath().getParent();
            String link = base.relativize(svg.toAbsolutePath()).toString();
            String existing = Files.exists(o.markdown) ? Files.readString(o.markdown, StandardCharsets.UTF_8) : null;
            writeFile(o.markdown, MarkdownReport.keepingHandSections(
                    MarkdownReport.of(outcome, o, command, machine, link, csv), existing), out);
        }
    }

    private static void writeFile(Path file, String content, PrintStream out) throws IOException {
        Path parent = file.toAbsolutePath().getParent();
        if (parent != null) {
            Files.createDirectories(parent);
        }
        Files.writeString(file, content, StandardCharsets.UTF_8);
        out.println("wrote " + file);
    }
}
