package org.rds4j.tools;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A parsed command line: {@code --name value}, {@code --name=value}, {@code --flag} and positional arguments.
 * Each tool declares which options take a value and which are flags, so that a typo is an error rather than a
 * silently ignored setting. A one-letter value option {@code X} is spelled {@code -X value} or {@code -Xvalue}, as
 * getopt(3) spells them (ping's {@code -c}, {@code -i}, {@code -I}, which are case-sensitive); one-letter flags are
 * spelled {@code -c} or grouped, {@code -cn} (info's). {@code --help} and {@code -h} are always accepted.
 */
final class Args {
    private final Map<String, String> values;
    private final Set<String> flags;
    private final List<String> positionals;

    private Args(Map<String, String> values, Set<String> flags, List<String> positionals) {
        this.values = values;
        this.flags = flags;
        this.positionals = positionals;
    }

    /** The arguments as given, all positional: for a command that parses its own command line. */
    static Args verbatim(String[] argv) {
        return new Args(new HashMap<>(), new HashSet<>(), List.of(argv));
    }

    /**
     * Parses {@code argv} against the option names (without dashes) that take a value and those that are flags.
     *
     * @throws UsageException an unknown option, a missing value, or an option given twice
     */
    static Args parse(String[] argv, Set<String> valueOptions, Set<String> flagOptions) throws UsageException {
        Map<String, String> values = new HashMap<>();
        Set<String> flags = new HashSet<>();
        List<String> positionals = new ArrayList<>();
        boolean optionsEnded = false;
        for (int i = 0; i < argv.length; i++) {
            String arg = argv[i];
            if (optionsEnded || !arg.startsWith("-") || arg.equals("-")) {
                positionals.add(arg);
                continue;
            }
            if (arg.equals("--")) {
                optionsEnded = true;
                continue;
            }
            if (arg.equals("-h") || arg.equals("--help")) {
                flags.add("help");
                continue;
            }
            if (!arg.startsWith("--")) {
                String letter = arg.substring(1, 2);
                if (flagOptions.contains(letter)) {
                    // One-letter flags, alone or grouped as getopt groups them: -c, -cn.
                    for (int k = 1; k < arg.length(); k++) {
                        String f = arg.substring(k, k + 1);
                        if (!flagOptions.contains(f)) {
                            throw new UsageException("unknown option -" + f + (arg.length() > 2 ? " in " + arg : ""));
                        }
                        flags.add(f);
                    }
                    continue;
                }
                if (!valueOptions.contains(letter)) {
                    throw new UsageException("unknown option " + arg);
                }
                String value;
                if (arg.length() > 2) {
                    value = arg.substring(2);
                } else if (i + 1 < argv.length) {
                    value = argv[++i];
                } else {
                    throw new UsageException("option -" + letter + " needs a value");
                }
                if (values.putIfAbsent(letter, value) != null) {
                    throw new UsageException("option -" + letter + " given twice");
                }
                continue;
            }
            int eq = arg.indexOf('=');
            String name = eq < 0 ? arg.substring(2) : arg.substring(2, eq);
            if (name.length() == 1) {
                throw new UsageException("unknown option --" + name);
            }
            if (valueOptions.contains(name)) {
                String value;
                if (eq >= 0) {
                    value = arg.substring(eq + 1);
                } else if (i + 1 < argv.length) {
                    value = argv[++i];
                } else {
                    throw new UsageException("option --" + name + " needs a value");
                }
                if (values.putIfAbsent(name, value) != null) {
                    throw new UsageException("option --" + name + " given twice");
                }
            } else if (flagOptions.contains(name)) {
                if (eq >= 0) {
                    throw new UsageException("option --" + name + " takes no value");
                }
                flags.add(name);
            } else {
                throw new UsageException("unknown option --" + name);
            }
        }
        return new Args(values, flags, Collections.unmodifiableList(positionals));
    }

    boolean help() {
        return flags.contains("help");
    }

    boolean flag(String name) {
        return flags.contains(name);
    }

    boolean has(String name) {
        return values.containsKey(name);
    }

    String string(String name, String fallback) {
        return values.getOrDefault(name, fallback);
    }

    String required(String name) throws UsageException {
        String v = values.get(name);
        if (v == null) {
            throw new UsageException("option " + spelled(name) + " is required");
        }
        return v;
    }

    long longValue(String name, long fallback, long min, long max) throws UsageException {
        String v = values.get(name);
        if (v == null) {
            return fallback;
        }
        long n;
        try {
            n = Long.parseLong(v.trim());
        } catch (NumberFormatException e) {
            throw new UsageException("option " + spelled(name) + " needs a whole number, got '" + v + "'", e);
        }
        if (n < min || n > max) {
            throw new UsageException("option " + spelled(name) + " must be between " + min + " and " + max + ", got "
                    + n);
        }
        return n;
    }

    int intValue(String name, int fallback, int min, int max) throws UsageException {
        return (int) longValue(name, fallback, min, max);
    }

    /** A duration in (possibly fractional) seconds, as nanoseconds. */
    long secondsAsNanos(String name, double fallback, double min, double max) throws UsageException {
        String v = values.get(name);
        double s = fallback;
        if (v != null) {
            try {
                s = Double.parseDouble(v.trim());
            } catch (NumberFormatException e) {
                throw new UsageException("option " + spelled(name) + " needs a number of seconds, got '" + v + "'",
                        e);
            }
            if (!(s >= min && s <= max)) {
                throw new UsageException("option " + spelled(name) + " must be between " + min + " and " + max
                        + " seconds, got " + v);
            }
        }
        return (long) (s * 1e9);
    }

    /** How the user spells option {@code name}: {@code -c} for a one-letter option, {@code --count} otherwise. */
    static String spelled(String name) {
        return (name.length() == 1 ? "-" : "--") + name;
    }

    List<String> positionals() {
        return positionals;
    }

    /** Fails unless there are between {@code min} and {@code max} positional arguments. */
    Args expectPositionals(int min, int max) throws UsageException {
        if (positionals.size() < min) {
            throw new UsageException(min == 1 && max == 1 ? "missing argument" : "missing arguments");
        }
        if (positionals.size() > max) {
            throw new UsageException("unexpected argument '" + positionals.get(max) + "'");
        }
        return this;
    }
}
