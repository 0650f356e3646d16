package org.rds4j.tools;

import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Checks the pattern streams arriving at one socket, one {@link SequenceChecker} per source address and port (each
 * sender counts from 0), and prints the first few problems to stderr as they happen. Used by {@code recv}, and by
 * {@code send --expect-echo} for the echoes. One thread only.
 */
final class StreamVerifier {
    /** After this many problem lines the rest only show in the counts. */
    private static final int MAX_DETAILS = 10;

    private final String tool;
    private final PrintStream err;
    private final Map<InetSocketAddress, SequenceChecker> sources = new LinkedHashMap<>();
    private long messages;
    private long bytes;
    private int details;

    StreamVerifier(String tool, PrintStream err) {
        this.tool = tool;
        this.err = err;
    }

    /** Checks one message; returns whether it was the expected one, intact. */
    boolean accept(InetSocketAddress source, ByteBuffer payload) {
        SequenceChecker checker = sources.computeIfAbsent(source, s -> new SequenceChecker());
        long expected = checker.expected();
        int length = payload.remaining();
        SequenceChecker.Outcome outcome = checker.accept(payload);
        messages++;
        bytes += length;
        if (outcome == SequenceChecker.Outcome.OK) {
            return true;
        }
        if (details++ < MAX_DETAILS) {
            err.println(tool + ": from " + Endpoints.format(source) + ": " + explain(outcome, expected,
                    checker.lastClaimed(), length));
        }
        return false;
    }

    private static String explain(SequenceChecker.Outcome outcome, long expected, long claimed, int length) {
        switch (outcome) {
            case GAP:
                return "expected message " + expected + ", got " + claimed + ": " + (claimed - expected)
                        + " lost (so far)";
            case DUPLICATE:
                return "message " + claimed + " again (duplicate), expected " + expected;
            case REORDERED:
                return "message " + claimed + " arrived late (reordered), expected " + expected;
            case CORRUPT:
                return "message " + expected + " (" + length + " bytes) is corrupt";
            default:
                return outcome.toString();
        }
    }

    long messages() {
        return messages;
    }

    long bytes() {
        return bytes;
    }

    int sources() {
        return sources.size();
    }

    long lost() {
        return sum(SequenceChecker::lost);
    }

    long duplicates() {
        return sum(SequenceChecker::duplicates);
    }

    long reordered() {
        return sum(SequenceChecker::reordered);
    }

    long corrupt() {
        return sum(SequenceChecker::corrupt);
    }

    long problems() {
        return sum(SequenceChecker::problems);
    }

    /** "0 lost, 0 duplicate, 0 reordered, 0 corrupt", for summary lines. */
    String problemCounts() {
        return lost() + " lost, " + duplicates() + " duplicate, " + reordered() + " reordered, " + corrupt()
                + " corrupt";
    }

    private long sum(java.util.function.ToLongFunction<SequenceChecker> f) {
        long n = 0;
        for (SequenceChecker c : sources.values()) {
            n += f.applyAsLong(c);
        }
        return n;
    }
}
