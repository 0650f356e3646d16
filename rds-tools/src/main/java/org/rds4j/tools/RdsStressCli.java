package org.rds4j.tools;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.rds4j.RdsStackConfig;

/**
 * rds-stress's command line, parsed as its getopt_long call parses it: short options {@code -q 4096} or
 * {@code -q4096}, flags grouped ({@code -vz}), long options {@code --req-bytes 4096} or {@code --req-bytes=4096} and
 * abbreviated to any unique prefix, numbers in decimal, octal ({@code 0...}) or hex ({@code 0x...}) with an optional
 * k/m/g suffix (powers of 1024), parsing stopping at the first non-option. Options that need RDMA, or kernel features
 * RDS over TCP in rds4j lacks, are refused with the reason.
 */
final class RdsStressCli {
    /** What only this side uses: never sent to the peer. */
    record LocalFlags(boolean showHistogram, long outlierMicros, boolean reportCpu, int tcpPort) {
    }

    /** A parsed command line: the options record, whether it is the active side, and the local flags. */
    record Parsed(RdsStressOptions options, boolean active, LocalFlags flags, boolean help, List<String> notes) {
    }

    private enum Arg { NONE, REQUIRED }

    private record Opt(String longName, char shortName, Arg arg) {
    }

    private static final List<Opt> OPTS = List.of(
            new Opt("req-bytes", 'q', Arg.REQUIRED),
            new Opt("ack-bytes", 'a', Arg.REQUIRED),
            new Opt("rdma-bytes", 'D', Arg.REQUIRED),
            new Opt("tasks", 't', Arg.REQUIRED),
            new Opt("depth", 'd', Arg.REQUIRED),
            new Opt("recv-addr", 'r', Arg.REQUIRED),
            new Opt("send-addr", 's', Arg.REQUIRED),
            new Opt("port", 'p', Arg.REQUIRED),
            new Opt("time", 'T', Arg.REQUIRED),
            new Opt("tos", 'Q', Arg.REQUIRED),
            new Opt("report-cpu", 'c', Arg.NONE),
            new Opt("report-summary", 'z', Arg.NONE),
            new Opt("rtprio", 'R', Arg.NONE),
            new Opt("verify", 'v', Arg.NONE),
            new Opt("trace", 'V', Arg.NONE),
            new Opt("rdma-use-once", '\0', Arg.REQUIRED),
            new Opt("rdma-use-get-mr", '\0', Arg.REQUIRED),
            new Opt("rdma-use-fence", '\0', Arg.REQUIRED),
            new Opt("rdma-use-notify", '\0', Arg.REQUIRED),
            new Opt("rdma-cache-mrs", '\0', Arg.REQUIRED),
            new Opt("rdma-alignment", '\0', Arg.REQUIRED),
            new Opt("rdma-key-o-meter", '\0', Arg.NONE),
            new Opt("show-params", '\0', Arg.NONE),
            new Opt("show-perfdata", '\0', Arg.NONE),
            new Opt("connect-retries", '\0', Arg.REQUIRED),
            new Opt("use-cong-monitor", '\0', Arg.REQUIRED),
            new Opt("show-outliers", '\0', Arg.REQUIRED),
            new Opt("show-histogram", '\0', Arg.NONE),
            new Opt("reset", '\0', Arg.NONE),
            new Opt("async", '\0', Arg.NONE),
            // rds4j's own: the RDS/TCP port of this side's stack, which the kernel fixes at 16385.
            new Opt("tcp-port", '\0', Arg.REQUIRED),
            new Opt("help", 'h', Arg.NONE),
            // Short-only options of rds-stress.
            new Opt(null, 'I', Arg.REQUIRED),
            new Opt(null, 'M', Arg.REQUIRED),
            new Opt(null, 'o', Arg.NONE));

    static final String USAGE = "usage: rds4j rds-stress [OPTIONS]\n\n"
            + "rds-stress (rds-tools " + RdsStressOptions.VERSION + ") over RDS/TCP: without -s it waits for an\n"
            + "active rds-stress on TCP port -p; with -s it connects to a passive one there, sends the options and\n"
            + "runs. Either side may be the kernel's rds-stress. Task i uses RDS port (-p + 1 + i) on both sides.\n\n"
            + "Send & Recv parameters:\n"
            + " -r, --recv-addr ADDR    use this local address (default: the control connection's)\n"
            + " -p, --port PORT         control port; RDS ports start one above (default 4000)\n\n"
            + "Send parameters (the active side's; the passive side takes the peer's):\n"
            + " -s, --send-addr ADDR    send to this address: be the active side\n"
            + " -a, --ack-bytes BYTES   ack message length (default and minimum " + RdsStressHeader.BYTES + ")\n"
            + " -q, --req-bytes BYTES   request message length (default 1024)\n"
            + " -o                      datagrams sent one way only (default is both)\n"
            + " -d, --depth N           request pipeline depth, nr outstanding (default 1)\n"
            + " -t, --tasks N           number of tasks (default 1)\n"
            + " -T, --time SECONDS      runtime of test, 0 means infinite (default 0)\n"
            + " -Q, --tos TOS           type of service: only 0 over rds4j\n"
            + " -v, --verify            verify every payload against the pattern\n"
            + " --use-cong-monitor 0|1  wait for congestion updates before resending (default 1)\n"
            + " --connect-retries N     retry a refused control connection N times, a second apart\n\n"
            + "Optional flags:\n"
            + " -c, --report-cpu        report cpu use (from /proc/stat)\n"
            + " -V, --trace             trace execution\n"
            + " -z, --report-summary    print a summary at end of test only\n"
            + " -R, --rtprio            accepted; a JVM cannot take real-time priority, so it has no effect\n"
            + " --show-params           print the options before running\n"
            + " --show-histogram        print a histogram of round-trip times at the end\n"
            + " --show-outliers USECS   print each round trip longer than USECS to stderr\n\n"
            + "rds4j only:\n"
            + " --tcp-port P            RDS/TCP port of this side's stack (default " + RdsStackConfig.RDS_TCP_PORT
            + ", the kernel's)\n\n"
            + "Refused (they need RDMA or kernel-only features): -D/--rdma-bytes, -I, -M, --rdma-use-once,\n"
            + "--rdma-use-get-mr, --rdma-use-fence, --rdma-use-notify, --rdma-cache-mrs, --rdma-alignment,\n"
            + "--rdma-key-o-meter, -Q other than 0, --async, --reset, --show-perfdata.\n\n"
            + "Example:\n"
            + "  recv$ rds4j rds-stress\n"
            + "  send$ rds4j rds-stress -s recv -q 4096 -t 2 -d 2\n";

    private RdsStressCli() {
    }

    static Parsed parse(List<String> argv) throws UsageException {
        RdsStressOptions o = RdsStressOptions.defaults();
        boolean active = false;
        boolean help = false;
        boolean histogram = false;
        boolean cpu = false;
        long outliers = 0xffffffffL;
        int tcpPort = RdsStackConfig.RDS_TCP_PORT;
        List<String> notes = new ArrayList<>();
        for (int i = 0; i < argv.size(); i++) {
            String a = argv.get(i);
            if (a.equals("--")) {
                if (i + 1 < argv.size()) {
                    throw new UsageException("unexpected argument '" + argv.get(i + 1) + "'");
                }
                break;
            }
            if (!a.startsWith("-") || a.equals("-")) {
                throw new UsageException("unexpected argument '" + a + "'");
            }
            List<Object[]> found = new ArrayList<>();
            if (a.startsWith("--")) {
                String body = a.substring(2);
                int eq = body.indexOf('=');
                String name = eq < 0 ? body : body.substring(0, eq);
                Opt opt = longOption(name);
                String value = null;
                if (opt.arg == Arg.REQUIRED) {
                    if (eq >= 0) {
                        value = body.substring(eq + 1);
                    } else if (i + 1 < argv.size()) {
                        value = argv.get(++i);
                    } else {
                        throw new UsageException("option '--" + opt.longName + "' requires an argument");
                    }
                } else if (eq >= 0) {
                    throw new UsageException("option '--" + opt.longName + "' doesn't allow an argument");
                }
                found.add(new Object[] {opt, value});
            } else {
                for (int k = 1; k < a.length(); k++) {
                    Opt opt = shortOption(a.charAt(k));
                    if (opt.arg == Arg.REQUIRED) {
                        String value;
                        if (k + 1 < a.length()) {
                            value = a.substring(k + 1);
                        } else if (i + 1 < argv.size()) {
                            value = argv.get(++i);
                        } else {
                            throw new UsageException("option requires an argument -- '" + a.charAt(k) + "'");
                        }
                        found.add(new Object[] {opt, value});
                        break;
                    }
                    found.add(new Object[] {opt, null});
                }
            }
            for (Object[] f : found) {
                Opt opt = (Opt) f[0];
                String v = (String) f[1];
                String key = opt.longName != null ? opt.longName : String.valueOf(opt.shortName);
                switch (key) {
                    case "req-bytes" -> o.reqSize = number(v, 0xffffffffL);
                    case "ack-bytes" -> o.ackSize = number(v, 0xffffffffL);
                    case "tasks" -> o.nrTasks = (int) number(v, 0xffff);
                    case "depth" -> o.reqDepth = number(v, 0xffffffffL);
                    case "recv-addr" -> o.receiveAddr = address(v);
                    case "send-addr" -> {
                        o.sendAddr = address(v);
                        active = true;
                    }
                    case "port" -> o.startingPort = (int) number(v, 0xffff);
                    case "time" -> o.runTime = number(v, 0xffffffffL);
                    case "tos" -> {
                        o.tos = (int) number(v, 0xff);
                        if (o.tos != 0) {
                            throw new UsageException("-Q/--tos " + o.tos + ": rds4j has no type-of-service "
                                    + "connections; leave it at 0");
                        }
                    }
                    case "report-cpu" -> cpu = true;
                    case "report-summary" -> o.summaryOnly = 1;
                    case "rtprio" -> {
                        o.rtprio = 1;
                        notes.add("-R: a JVM cannot take real-time priority; running at normal priority");
                    }
                    case "verify" -> o.verify = 1;
                    case "trace" -> o.tracing = 1;
                    case "show-params" -> o.showParams = 1;
                    case "connect-retries" -> o.connectRetries = number(v, 0xffffffffL);
                    case "use-cong-monitor" -> o.useCongMonitor = (int) number(v, 1);
                    case "show-outliers" -> outliers = number(v, 0xffffffffL);
                    case "show-histogram" -> histogram = true;
                    case "tcp-port" -> {
                        long p = number(v, 0xffff);
                        if (p == 0) {
                            throw new UsageException("--tcp-port must be 1..65535");
                        }
                        tcpPort = (int) p;
                    }
                    case "help" -> help = true;
                    case "show-perfdata" -> throw new UsageException("--show-perfdata prints the kernel's RDS "
                            + "counters (RDS_INFO_COUNTERS) and /proc/stat as CSV; rds4j does not offer it: use "
                            + "'rds4j info' for rds4j's counters");
                    case "reset" -> throw new UsageException("--reset drops a kernel RDS connection "
                            + "(RDS_CONN_RESET), which rds4j has no socket option for");
                    case "async" -> throw new UsageException("--async needs asynchronous send completions "
                            + "(RDS_CMSG_ASYNC_SEND), which RDS over TCP in rds4j does not have");
                    default -> throw new UsageException(rdmaOptionName(opt) + " needs RDMA (an InfiniBand or "
                            + "RoCE transport); rds4j runs RDS over TCP only: leave it out");
                }
            }
        }
        if (!active) {
            return new Parsed(o, false, new LocalFlags(histogram, outliers, cpu, tcpPort), help, notes);
        }
        if (o.ackSize < RdsStressHeader.BYTES) {
            throw new UsageException("ack size must be at least " + RdsStressHeader.BYTES + " bytes");
        }
        if (o.reqSize < RdsStressHeader.BYTES) {
            throw new UsageException("req size must be at least " + RdsStressHeader.BYTES + " bytes");
        }
        if (o.reqSize > MAX_MESSAGE || o.ackSize > MAX_MESSAGE) {
            throw new UsageException("an RDS message is at most " + MAX_MESSAGE + " bytes (1 MiB), so -q "
                    + "and -a must not exceed it");
        }
        if (o.reqDepth == 0 || o.reqDepth > 0xffff) {
            throw new UsageException("-d must be 1..65535 (the header's queue index is 16 bits)");
        }
        if (o.nrTasks == 0) {
            throw new UsageException("-t must be at least 1");
        }
        if (o.startingPort + o.nrTasks > 0xffff) {
            throw new UsageException("-p " + o.startingPort + " with -t " + o.nrTasks + " needs RDS ports up to "
                    + (o.startingPort + o.nrTasks) + ", beyond 65535");
        }
        return new Parsed(o, true, new LocalFlags(histogram, outliers, cpu, tcpPort), help, notes);
    }

    /** RDS's largest message, as the kernel's RDS_MAX_MSG_SIZE. */
    static final long MAX_MESSAGE = 1 << 20;

    private static String rdmaOptionName(Opt opt) {
        if (opt.longName != null && opt.shortName != '\0') {
            return "-" + opt.shortName + "/--" + opt.longName;
        }
        return opt.longName != null ? "--" + opt.longName : "-" + opt.shortName;
    }

    private static Opt longOption(String name) throws UsageException {
        Opt prefixMatch = null;
        int matches = 0;
        for (Opt o : OPTS) {
            if (o.longName == null) {
                continue;
            }
            if (o.longName.equals(name)) {
                return o;
            }
            if (!name.isEmpty() && o.longName.startsWith(name)) {
                prefixMatch = o;
                matches++;
            }
        }
        if (matches == 1) {
            return prefixMatch;
        }
        throw new UsageException(matches == 0 ? "unrecognized option '--" + name + "'"
                : "option '--" + name + "' is ambiguous");
    }

    private static Opt shortOption(char c) throws UsageException {
        for (Opt o : OPTS) {
            if (o.shortName == c) {
                return o;
            }
        }
        throw new UsageException("invalid option -- '" + c + "'");
    }

    /** strtoull with base 0 and a k/m/g suffix, at most {@code max}, as rds-stress reads numbers. */
    static long number(String s, long max) throws UsageException {
        String t = s;
        int shift = 0;
        if (!t.isEmpty()) {
            char last = Character.toLowerCase(t.charAt(t.length() - 1));
            shift = last == 'k' ? 10 : last == 'm' ? 20 : last == 'g' ? 30 : 0;
            if (shift != 0) {
                t = t.substring(0, t.length() - 1);
            }
        }
        try {
            long v;
            if (t.startsWith("0x") || t.startsWith("0X")) {
                v = Long.parseUnsignedLong(t.substring(2), 16);
            } else if (t.length() > 1 && t.startsWith("0")) {
                v = Long.parseUnsignedLong(t.substring(1), 8);
            } else {
                v = Long.parseUnsignedLong(t);
            }
            if (Long.numberOfLeadingZeros(v) < shift + 1) {
                throw new NumberFormatException("overflow");
            }
            v <<= shift;
            if (v < 0 || v > max) {
                throw new NumberFormatException("too large");
            }
            return v;
        } catch (NumberFormatException e) {
            throw new UsageException(String.format(Locale.ROOT, "invalid number '%s' (at most %d)", s, max));
        }
    }

    /** A host name or dotted quad, IPv4 only, as an unsigned 32-bit value. */
    static long address(String s) throws UsageException {
        try {
            for (InetAddress a : InetAddress.getAllByName(s)) {
                if (a instanceof Inet4Address) {
                    return Integer.toUnsignedLong(RdsStressTask.addressBits(a));
                }
            }
        } catch (UnknownHostException e) {
            // reported below, as rds-stress reports it
        }
        throw new UsageException("invalid host name or dotted quad '" + s + "'");
    }
}
