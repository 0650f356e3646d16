package org.rds4j.tools;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import javax.management.MBeanServerConnection;

/**
 * {@code rds4j info}: the kernel's rds-info for a running JVM's rds4j stacks, read through JMX from each stack's
 * MBean (docs/inspection.md): by process id on this host (the JDK's attach API starts the target's local management
 * agent; nothing to install or configure) or at a JMX service URL.
 */
final class InfoCommand implements Command {
    /** The sources, in the order rds-info prints them when no option names any (its table's order). */
    private static final List<String> SOURCES = List.of("I", "T", "c", "g", "k", "m", "n", "r", "s",
            "t");

    @Override
    public String name() {
        return "info";
    }

    @Override
    public String description() {
        return "show a JVM's RDS connections, sockets, queues and counters, like rds-info";
    }

    @Override
    public String usage() {
        return "usage: rds4j info (--pid PID | --jmx URL) [-ITcgkmnrst] [--stack NAME] [--json]\n\n"
                + "Prints what the rds4j stacks of a running JVM hold, as the kernel's rds-info prints Linux RDS,\n"
                + "read from each stack's JMX MBean (org.rds4j:type=Stack,name=NAME). The options limit the output\n"
                + "to the sources they name; with none, every source but -I is printed.\n\n"
                + "  --pid PID        a JVM of this user on this host (its local JMX agent is started through\n"
                + "                   the attach API if it is not running)\n"
                + "  --jmx URL        a JMX service URL, e.g. service:jmx:rmi:///jndi/rmi://127.0.0.1:9010/jmxrmi\n"
                + "  --stack NAME     only the stack of this name (default: every stack of the JVM)\n"
                + "  --json           one JSON document instead of the tables, for scripts: every item of the\n"
                + "                   sources chosen (all but -I by default), under its MBean name\n"
                + "  -c               counters (kernel names)\n"
                + "  -k               sockets: bound address, send and receive budgets, bytes queued each way,\n"
                + "                   congestion\n"
                + "  -m               off-heap memory of the stack's buffers: bytes in use, high-water mark,\n"
                + "                   bound (offHeapBytes), refusals\n"
                + "  -n               connections: one line per path, next TX and RX sequence numbers, flags\n"
                + "                   (s: messages wait to be written, c: connecting, C: connected), resets, the\n"
                + "                   peer's NPATHS and generation\n"
                + "  -r               receive queue of each socket (messages, bytes)\n"
                + "  -s               send queue of each path: messages not yet written\n"
                + "  -t               retransmit queue of each path: messages written, not yet acknowledged\n"
                + "  -T               TCP connections under the paths\n"
                + "  -I               InfiniBand connections: rds4j has none, and says so\n"
                + "  -g               congestion maps (rds4j's own): ports marked congested per address\n";
    }

    @Override
    public Set<String> valueOptions() {
        return Set.of("pid", "jmx", "stack");
    }

    @Override
    public Set<String> flagOptions() {
        Set<String> flags = new java.util.HashSet<>(SOURCES);
        flags.add("json");
        return flags;
    }

    @Override
    public int run(Args args, PrintStream out, PrintStream err) throws Exception {
        args.expectPositionals(0, 0);
        if (args.has("pid") == args.has("jmx")) {
            throw new UsageException("give the JVM to inspect: --pid PID or --jmx URL (one of them)");
        }
        List<String> sources = new ArrayList<>();
        for (String s : SOURCES) {
            if (args.flag(s)) {
                sources.add(s);
            }
        }
        if (sources.isEmpty()) {
            sources.addAll(SOURCES.subList(1, SOURCES.size()));
        }
        String only = args.string("stack", null);
        try (JmxTarget target = args.has("pid") ? JmxTarget.attach(args.longValue("pid", 0, 1, Long.MAX_VALUE))
                : JmxTarget.connect(args.required("jmx"))) {
            return print(target.connection(), target.description(), only, sources, args.flag("json"), out, err);
        }
    }

    /** Prints {@code sources} of every stack (or the one named) behind {@code server}; 1 if there is none. */
    static int print(MBeanServerConnection server, String where, String only, List<String> sources,
                     PrintStream out, PrintStream err) throws Exception {
        return print(server, where, only, sources, false, out, err);
    }

    /** As above; with {@code json}, one JSON document on one line instead of the tables. */
    static int print(MBeanServerConnection server, String where, String only, List<String> sources, boolean json,
                     PrintStream out, PrintStream err) throws Exception {
        List<StackView> stacks = StackView.readAll(server);
        if (only != null) {
            stacks.removeIf(s -> !s.name().equals(only));
        }
        if (stacks.isEmpty()) {
            err.println("rds4j info: " + where + " has no rds4j stack" + (only != null ? " named '" + only + "'"
                    : "") + " (none created yet, or each made with RdsStackConfig.jmx(false))");
            return 1;
        }
        if (json) {
            out.println(InfoJson.write(where, stacks, sources));
            out.flush();
            return 0;
        }
        InfoPrinter p = new InfoPrinter(out);
        for (StackView s : stacks) {
            out.println("rds4j stack " + s.name() + " (" + s.objectName() + ") of " + where + ":");
            for (String source : sources) {
                switch (source) {
                    case "I" -> p.infiniband();
                    case "T" -> p.tcp(s.paths());
                    case "c" -> p.counters(s.counters());
                    case "g" -> p.congestionMaps(s.congestionMaps());
                    case "k" -> p.sockets(s.sockets());
                    case "m" -> p.offHeap(s.offHeap());
                    case "n" -> p.connections(s.paths());
                    case "r" -> p.receiveQueue(s.sockets());
                    case "s" -> p.queue("Send", "queuedMessages", "queuedBytes", s.paths());
                    case "t" -> p.queue("Retransmit", "unackedMessages", "unackedBytes", s.paths());
                    default -> throw new IllegalStateException("unknown source " + source);
                }
            }
            out.println();
        }
        out.flush();
        return 0;
    }
}
