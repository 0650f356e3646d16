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
import java.util.concurrent.locks.LockSupport;
import org.rds4j.EbadfException;
import org.rds4j.RdsDatagram;
import org.rds4j.RdsSocket;
import org.rds4j.RdsStack;

/**
 * {@code rds4j ping}: like the kernel's rds-ping. A zero-length message to port 0 of a host is answered by that
 * host's RDS itself with a zero-length pong from port 0; no application needs to listen there.
 */
final class PingCommand implements Command {
    private static final ByteBuffer EMPTY = ByteBuffer.allocate(0);

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
        return "usage: rds4j ping [OPTIONS] ADDR\n\n"
                + "Sends a zero-length message to ADDR port 0 and waits for the pong, one line per reply.\n"
                + "Exits 0 if any reply came back.\n\n"
                + "  --count N        pings to send (default: until killed)\n"
                + "  --interval MS    milliseconds between pings (default 1000)\n"
                + "  --timeout MS     how long to wait for each reply (default 1000)\n"
                + "  --bind ADDR      local address (default 127.0.0.1, or ::1, for a loopback ADDR;\n"
                + "                   required otherwise)\n"
                + NetOptions.USAGE;
    }

    @Override
    public Set<String> valueOptions() {
        Set<String> s = new HashSet<>(NetOptions.VALUE_OPTIONS);
        s.addAll(Set.of("count", "interval", "timeout", "bind"));
        return s;
    }

    @Override
    public Set<String> flagOptions() {
        return Set.of();
    }

    @Override
    public int run(Args args, PrintStream out, PrintStream err) throws Exception {
        args.expectPositionals(1, 1);
        InetAddress target = Endpoints.address("ADDR", args.positionals().get(0));
        long count = args.longValue("count", 0, 1, Long.MAX_VALUE);
        long interval = TimeUnit.MILLISECONDS.toNanos(args.longValue("interval", 1000, 0, 3_600_000));
        long timeout = TimeUnit.MILLISECONDS.toNanos(args.longValue("timeout", 1000, 1, 3_600_000));
        InetAddress bind;
        if (args.has("bind")) {
            bind = Endpoints.address("bind", args.string("bind", null));
        } else if (target.isLoopbackAddress()) {
            bind = InetAddress.getByName(target.getAddress().length == 4 ? "127.0.0.1" : "::1");
        } else {
            throw new UsageException("--bind is required when ADDR is not a loopback address");
        }
        NetOptions net = NetOptions.from(args);
        InetSocketAddress pongSource = new InetSocketAddress(target, 0);

        RdsStack stack = net.createStack("ping", bind);
        Stats stats = new Stats();
        RdsSocket socket;
        try {
            socket = net.openSocket(stack);
            socket.bind(new InetSocketAddress(bind, 0));
        } catch (IOException | RuntimeException e) {
            stack.close();
            throw e;
        }
        SignalExit exit = new SignalExit(() -> {
            socket.close();
            out.println(stats.summary());
            out.flush();
            stack.close();
        }, () -> stats.received > 0 ? 0 : 1);
        try {
            for (long seq = 0; count == 0 || seq < count; seq++) {
                long sentAt = System.nanoTime();
                socket.send(EMPTY.duplicate(), pongSource);
                stats.sent++;
                long rtt = awaitPong(socket, pongSource, sentAt, sentAt + timeout);
                if (rtt >= 0) {
                    stats.reply(rtt);
                    out.printf(Locale.ROOT, "%4d: %d usec%n", seq, Format.micros(rtt));
                } else {
                    out.printf(Locale.ROOT, "%4d: no reply within %d ms%n", seq, TimeUnit.NANOSECONDS.toMillis(timeout));
                }
                out.flush();
                if (count == 0 || seq + 1 < count) {
                    // Pacing, not waiting for an event: the next ping is due one interval after this one.
                    for (long wait; (wait = sentAt + interval - System.nanoTime()) > 0; ) {
                        LockSupport.parkNanos(wait);
                    }
                }
            }
        } catch (EbadfException closed) {
            if (!exit.finish()) {
                return 0; // the signal hook prints the summary and sets the status
            }
            throw closed;
        } catch (IOException | RuntimeException e) {
            if (!exit.finish()) {
                return 0;
            }
            socket.close();
            stack.close();
            throw e;
        }
        if (!exit.finish()) {
            return 0;
        }
        socket.close();
        out.println(stats.summary());
        stack.close();
        return stats.received > 0 ? 0 : 1;
    }

    /**
     * The round trip in nanoseconds, or -1 if no pong came before the deadline. Anything else that arrives (a
     * message to our port) is skipped.
     */
    private static long awaitPong(RdsSocket socket, InetSocketAddress from, long sentAt, long deadline)
            throws IOException {
        for (long left; (left = deadline - System.nanoTime()) > 0; ) {
            Optional<RdsDatagram> d = socket.receive(Duration.ofNanos(left));
            if (d.isPresent() && d.get().length() == 0 && d.get().source().equals(from)) {
                return System.nanoTime() - sentAt;
            }
        }
        return -1;
    }

    /** Written by the pinging thread, read by the signal hook; volatile so the hook sees current numbers. */
    private static final class Stats {
        volatile long sent;
        volatile long received;
        volatile long min = Long.MAX_VALUE;
        volatile long max;
        volatile long total;

        void reply(long rtt) {
            received++;
            min = Math.min(min, rtt);
            max = Math.max(max, rtt);
            total += rtt;
        }

        String summary() {
            return String.format(Locale.ROOT, "ping: %d sent, %d received, %d%% loss, min/avg/max %d/%d/%d usec",
                    sent, received, sent == 0 ? 0 : 100 * (sent - received) / sent,
                    received == 0 ? 0 : Format.micros(min), received == 0 ? 0 : Format.micros(total / received),
                    Format.micros(max));
        }
    }
}
