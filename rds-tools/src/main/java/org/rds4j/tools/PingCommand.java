package org.rds4j.tools;

import java.io.IOException;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.HashSet;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.rds4j.EbadfException;
import org.rds4j.RdsDatagram;
import org.rds4j.RdsException;
import org.rds4j.RdsSelector;
import org.rds4j.RdsSocket;
import org.rds4j.RdsStack;

/**
 * {@code rds4j ping}: the kernel's rds-ping. A zero-length message to port 0 of a host is answered by that host's
 * RDS itself with a zero-length pong from port 0; no application needs to listen there.
 *
 * <p>As rds-ping does, it sends one ping per interval whether or not the last one was answered, each from the next
 * of {@value #SOCKETS} sockets in turn, so that a pong tells by the socket it arrives on which ping it answers; a
 * reply prints {@code " %3u: %ld usec"} with the ping's number counted from 1. A socket whose last ping is still
 * unanswered when its turn comes again waits (the ping is not sent) until the reply comes or the ping is older than
 * {@code --timeout}; then the ping counts as lost and the socket is replaced by a fresh one, so that a late pong can
 * never be taken for the answer to a newer ping.
 */
final class PingCommand implements Command {
    /** rds-ping's NSOCKETS. */
    static final int SOCKETS = 8;
    private static final ByteBuffer EMPTY = ByteBuffer.allocate(0);
    /** rds-ping waits 1 s between pings by default. */
    private static final long DEFAULT_INTERVAL = TimeUnit.SECONDS.toNanos(1);
    private static final long MAX_NANOS = TimeUnit.HOURS.toNanos(1);

    @Override
    public String name() {
        return "ping";
    }

    @Override
    public String description() {
        return "measure round trips to a host's RDS (port 0), like rds-ping";
    }

    @Override
    public String usage() {
        return "usage: rds4j ping [-c count] [-i interval] [-I local_addr] [OPTIONS] ADDR\n\n"
                + "Sends a zero-length message to ADDR port 0 once per interval, as the kernel's rds-ping does, and\n"
                + "prints one line per reply (\" N: RTT usec\", N counting pings from 1), then a summary line.\n"
                + "Exits 0 if any reply came back, 1 if none did.\n\n"
                + "  -c COUNT         pings to send, then stop once all are answered (0: until killed; k, m, g\n"
                + "                   multiply by 2^10, 2^20, 2^30, as rds-ping reads it)\n"
                + "  --count N        the same, N >= 1 (default: until killed)\n"
                + "  -i INTERVAL      time between pings in seconds, fractions allowed, or with a ms, msec, us or\n"
                + "                   usec suffix (default 1)\n"
                + "  --interval MS    the same in milliseconds (default 1000)\n"
                + "  -I ADDR          local address (default: the source address of the route to ADDR, as\n"
                + "                   rds-ping picks it; 127.0.0.1 for 127.x, ::1 for ::1)\n"
                + "  --bind ADDR      the same as -I\n"
                + "  --timeout MS     how long a ping waits for its reply before it counts as lost, and how long\n"
                + "                   the last one is waited for (default: the interval, at least 1000)\n"
                + NetOptions.USAGE;
    }

    @Override
    public Set<String> valueOptions() {
        Set<String> s = new HashSet<>(NetOptions.VALUE_OPTIONS);
        s.addAll(Set.of("count", "interval", "timeout", "bind", "c", "i", "I"));
        return s;
    }

    @Override
    public Set<String> flagOptions() {
        return Set.of();
    }

    /** The options of one run, checked: everything {@link #run} needs before it touches the network. */
    record Options(InetAddress target, InetAddress source, long count, long intervalNanos, long timeoutNanos) {
    }

    /**
     * Reads and checks the options. Without {@code -I}/{@code --bind} the source is the route's
     * ({@link Endpoints#routeSource}).
     *
     * @throws IOException there is no route to the target
     */
    static Options options(Args args) throws UsageException, IOException {
        args.expectPositionals(1, 1);
        InetAddress target = Endpoints.address("ADDR", args.positionals().get(0));
        long count = 0;
        if (args.has("c") && args.has("count")) {
            throw new UsageException("give -c or --count, not both");
        } else if (args.has("c")) {
            count = parseCount(args.string("c", null));
        } else {
            count = args.longValue("count", 0, 1, Long.MAX_VALUE);
        }
        long interval;
        if (args.has("i") && args.has("interval")) {
            throw new UsageException("give -i or --interval, not both");
        } else if (args.has("i")) {
            interval = parseInterval(args.string("i", null));
        } else {
            interval = TimeUnit.MILLISECONDS.toNanos(args.longValue("interval", 1000, 0, 3_600_000));
        }
        long timeout = args.has("timeout")
                ? TimeUnit.MILLISECONDS.toNanos(args.longValue("timeout", 1000, 1, 3_600_000))
                : Math.max(interval, DEFAULT_INTERVAL);
        if (args.has("I") && args.has("bind")) {
            throw new UsageException("give -I or --bind, not both");
        }
        InetAddress source;
        if (args.has("I")) {
            source = Endpoints.address("I", args.string("I", null));
        } else if (args.has("bind")) {
            source = Endpoints.address("bind", args.string("bind", null));
        } else {
            source = Endpoints.routeSource(target);
        }
        if (source.getAddress().length != target.getAddress().length) {
            throw new UsageException("the local address " + Endpoints.host(source) + " and ADDR "
                    + Endpoints.host(target) + " are of different families");
        }
        return new Options(target, source, count, interval, timeout);
    }

    /** {@code -c}: a whole number, 0 for no limit, optionally times 2^10, 2^20 or 2^30 (k, m, g), as rds-ping. */
    static long parseCount(String text) throws UsageException {
        String t = text.trim();
        int shift = 0;
        if (!t.isEmpty()) {
            switch (Character.toLowerCase(t.charAt(t.length() - 1))) {
                case 'k' -> shift = 10;
                case 'm' -> shift = 20;
                case 'g' -> shift = 30;
                default -> shift = 0;
            }
        }
        String digits = shift == 0 ? t : t.substring(0, t.length() - 1);
        long n;
        try {
            n = Long.parseLong(digits);
        } catch (NumberFormatException e) {
            throw new UsageException("option -c needs a packet count, got '" + text + "'", e);
        }
        if (n < 0 || n > (Long.MAX_VALUE >> shift)) {
            throw new UsageException("option -c must be between 0 and " + (Long.MAX_VALUE >> shift) + ", got '"
                    + text + "'");
        }
        return n << shift;
    }

    /** {@code -i}: seconds, fractions allowed, or with a ms/msec or us/usec suffix, as rds-ping; as nanoseconds. */
    static long parseInterval(String text) throws UsageException {
        String t = text.trim();
        double unit = 1e9;
        for (String[] suffix : new String[][] {{"msec", "1e6"}, {"ms", "1e6"}, {"usec", "1e3"}, {"us", "1e3"}}) {
            if (t.endsWith(suffix[0])) {
                t = t.substring(0, t.length() - suffix[0].length());
                unit = Double.parseDouble(suffix[1]);
                break;
            }
        }
        double value;
        try {
            value = Double.parseDouble(t);
        } catch (NumberFormatException e) {
            throw new UsageException("option -i needs an interval such as 1, 0.2 or 200msec, got '" + text + "'",
                    e);
        }
        double nanos = value * unit;
        if (!(nanos >= 0 && nanos <= MAX_NANOS) || t.endsWith("d") || t.endsWith("f") || t.endsWith("D")
                || t.endsWith("F")) {
            throw new UsageException("option -i must be between 0 and 3600 seconds, got '" + text + "'");
        }
        return Math.round(nanos);
    }

    /** One reply line, as rds-ping prints it: {@code " %3u: %ld usec"}, the sender if not ADDR, DUP! if repeated. */
    static String replyLine(long number, long rttNanos, InetAddress from, InetAddress target, boolean duplicate) {
        StringBuilder s = new StringBuilder(String.format(Locale.ROOT, " %3d: %d usec", number,
                Format.micros(rttNanos)));
        if (from != null && !from.equals(target)) {
            s.append(" (").append(Endpoints.host(from)).append(')');
        }
        if (duplicate) {
            s.append(" DUP!");
        }
        return s.toString();
    }

    /** A ping that could not be sent, as rds-ping prints it: {@code " %3u: ERROR: reason"}. */
    static String errorLine(long number, String reason) {
        return String.format(Locale.ROOT, " %3d: ERROR: %s", number, reason);
    }

    @Override
    public int run(Args args, PrintStream out, PrintStream err) throws Exception {
        Options o = options(args);
        NetOptions net = NetOptions.from(args);
        InetSocketAddress destination = new InetSocketAddress(o.target(), 0);
        Stats stats = new Stats(o.source(), o.target());

        RdsStack stack = net.createStack("ping", o.source());
        RdsSelector selector = null;
        Slot[] slots = new Slot[SOCKETS];
        try {
            selector = stack.openSelector();
            for (int i = 0; i < SOCKETS; i++) {
                slots[i] = new Slot(open(net, stack, selector, o.source()));
            }
        } catch (IOException | RuntimeException e) {
            closeAll(slots, selector, stack);
            throw e;
        }
        RdsSelector sel = selector;
        SignalExit exit = new SignalExit(() -> {
            closeAll(slots, sel, stack);
            out.println(stats.summary());
            out.flush();
        }, () -> stats.received > 0 ? 0 : 1);
        try {
            loop(o, net, stack, sel, slots, destination, stats, out);
        } catch (EbadfException closed) {
            if (!exit.finish()) {
                return 0; // the signal hook closed the sockets, prints the summary and sets the status
            }
            closeAll(slots, sel, stack);
            throw closed;
        } catch (IOException | RuntimeException e) {
            if (!exit.finish()) {
                return 0;
            }
            closeAll(slots, sel, stack);
            throw e;
        }
        if (!exit.finish()) {
            return 0;
        }
        closeAll(slots, sel, stack);
        out.println(stats.summary());
        return stats.received > 0 ? 0 : 1;
    }

    private static void loop(Options o, NetOptions net, RdsStack stack, RdsSelector selector, Slot[] slots,
            InetSocketAddress destination, Stats stats, PrintStream out) throws IOException {
        long count = o.count();
        Schedule at = new Schedule(System.nanoTime());
        while (true) {
            if (count > 0 && stats.received >= count) {
                break;
            }
            long now = System.nanoTime();
            long wakeAt;
            if (count > 0 && stats.sent >= count) {
                // Every ping is out: wait for the missing replies, the last ping's timeout at most.
                if (!anyPending(slots) || now - at.lastSent >= o.timeoutNanos()) {
                    break;
                }
                wakeAt = at.lastSent + o.timeoutNanos();
            } else if (now - at.nextSend >= 0) {
                Slot slot = slots[at.next];
                if (slot.pending && now - slot.sentAt < o.timeoutNanos()) {
                    // Its last ping is still out: as rds-ping, send nothing now; try again when the reply comes
                    // (see the select below) or when that ping's time is up.
                    at.nextSend = slot.sentAt + o.timeoutNanos();
                    wakeAt = at.nextSend;
                } else {
                    if (slot.pending) {
                        // Lost: a fresh socket (a new port), so that a late pong cannot answer the next ping.
                        selector.register(slot.socket, 0);
                        slot.socket.close();
                        slot.socket = open(net, stack, selector, o.source());
                        slot.pending = false;
                    }
                    send(slot, destination, stats, out, now);
                    at.lastSent = now;
                    at.next = (at.next + 1) % SOCKETS;
                    at.nextSend = now + o.intervalNanos();
                    continue;
                }
            } else {
                wakeAt = at.nextSend;
            }
            selector.select(Duration.ofNanos(Math.max(0, wakeAt - System.nanoTime())), (socket, ops) -> {
                for (int i = 0; i < SOCKETS; i++) {
                    if (slots[i].socket == socket && drain(slots[i], o.target(), stats, out) && i == at.next) {
                        // The socket whose turn it is is free again: its ping goes at the pace of the interval.
                        at.nextSend = Math.min(at.nextSend, at.lastSent + o.intervalNanos());
                    }
                }
            });
        }
    }

    private static void send(Slot slot, InetSocketAddress destination, Stats stats, PrintStream out, long now)
            throws IOException {
        long number = stats.sent + 1;
        slot.number = number;
        slot.sentAt = now;
        slot.replies = 0;
        stats.sent = number;
        try {
            slot.socket.send(EMPTY.duplicate(), destination);
            slot.pending = true;
        } catch (EbadfException closed) {
            throw closed;
        } catch (RdsException e) {
            // As rds-ping: the ping counts as sent, its line says why it could not go, and pinging goes on.
            out.println(errorLine(number, e.getMessage()));
            out.flush();
        }
    }

    /** When the next ping is due, when the last one went, and whose turn it is; the pinging thread's only. */
    private static final class Schedule {
        long nextSend;
        long lastSent;
        int next;

        Schedule(long start) {
            this.nextSend = start;
            this.lastSent = start;
        }
    }

    /** Reads every message queued on {@code slot}; true if one of them answered its outstanding ping. */
    private static boolean drain(Slot slot, InetAddress target, Stats stats, PrintStream out) throws IOException {
        boolean answered = false;
        for (int i = 0; i < 1024; i++) {
            Optional<RdsDatagram> d = slot.socket.receive(Duration.ZERO);
            if (d.isEmpty()) {
                break;
            }
            long now = System.nanoTime();
            RdsDatagram m = d.get();
            if (m.kind() != RdsDatagram.Kind.DATA || m.length() != 0 || m.source().getPort() != 0
                    || slot.number == 0) {
                continue; // not a pong (a message to our port, a notification), or nothing sent on it yet
            }
            long rtt = now - slot.sentAt;
            boolean duplicate = slot.replies > 0;
            slot.replies++;
            if (!duplicate) {
                slot.pending = false;
                answered = true;
                stats.reply(rtt);
            } else {
                stats.duplicates++;
            }
            out.println(replyLine(slot.number, rtt, m.source().getAddress(), target, duplicate));
            out.flush();
        }
        return answered;
    }

    private static boolean anyPending(Slot[] slots) {
        for (Slot s : slots) {
            if (s.pending) {
                return true;
            }
        }
        return false;
    }

    private static RdsSocket open(NetOptions net, RdsStack stack, RdsSelector selector, InetAddress source)
            throws IOException {
        RdsSocket s = net.openSocket(stack);
        try {
            s.bind(new InetSocketAddress(source, 0));
            selector.register(s, RdsSelector.OP_READ);
            return s;
        } catch (IOException | RuntimeException e) {
            s.close();
            throw e;
        }
    }

    private static void closeAll(Slot[] slots, RdsSelector selector, RdsStack stack) {
        for (Slot s : slots) {
            if (s != null) {
                s.socket.close();
            }
        }
        if (selector != null) {
            selector.close();
        }
        stack.close();
    }

    /** One of the sockets and the ping last sent on it; used by the pinging thread only. */
    private static final class Slot {
        RdsSocket socket;
        long number;
        long sentAt;
        long replies;
        boolean pending;

        Slot(RdsSocket socket) {
            this.socket = socket;
        }
    }

    /** Written by the pinging thread, read by the signal hook; volatile so the hook sees current numbers. */
    static final class Stats {
        private final InetAddress source;
        private final InetAddress target;
        volatile long sent;
        volatile long received;
        volatile long duplicates;
        volatile long min = Long.MAX_VALUE;
        volatile long max;
        volatile long total;

        Stats(InetAddress source, InetAddress target) {
            this.source = source;
            this.target = target;
        }

        void reply(long rtt) {
            received++;
            min = Math.min(min, rtt);
            max = Math.max(max, rtt);
            total += rtt;
        }

        /**
         * rds4j's summary line (rds-ping prints none): {@code ping: 3 sent, 3 received, 0% loss, min/avg/max
         * 152/308/464 usec, 127.0.0.1 to 127.0.0.2}.
         */
        String summary() {
            long s = sent;
            long r = received;
            return String.format(Locale.ROOT, "ping: %d sent, %d received, %d%% loss, min/avg/max %d/%d/%d usec%s, "
                    + "%s to %s", s, r, s == 0 ? 0 : 100 * (s - Math.min(s, r)) / s,
                    r == 0 ? 0 : Format.micros(min), r == 0 ? 0 : Format.micros(total / r), Format.micros(max),
                    duplicates == 0 ? "" : ", " + duplicates + " duplicates", Endpoints.host(source),
                    Endpoints.host(target));
        }
    }
}
