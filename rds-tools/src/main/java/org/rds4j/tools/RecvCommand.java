package org.rds4j.tools;

import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.HashSet;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.rds4j.RdsDatagram;
import org.rds4j.RdsSocket;
import org.rds4j.RdsStack;

/**
 * {@code rds4j recv}: receives N messages and checks the pattern stream of every source (address and port, each
 * counting from 0). Exits 1 on any lost, duplicate, reordered or corrupt message, or when the timeout passes first.
 */
final class RecvCommand implements Command {
    @Override
    public String name() {
        return "recv";
    }

    @Override
    public String description() {
        return "receive N pattern messages and verify them per source";
    }

    @Override
    public String usage() {
        return "usage: rds4j recv --bind ADDR:PORT --count N [OPTIONS]\n\n"
                + "Prints 'recv: listening on ADDR:PORT' once bound, receives --count messages and checks the\n"
                + "pattern of each source; reports lost, duplicate, reordered and corrupt messages.\n\n"
                + "  --bind ADDR:PORT the local address and RDS port\n"
                + "  --count N        messages to receive\n"
                + "  --timeout S      give up after S seconds, counted from the end of any stall (default 60)\n"
                + "  --stall S        once listening, wait S seconds before reading anything: a deliberately slow\n"
                + "                   receiver, whose port becomes congested once more than half of SO_RCVBUF\n"
                + "                   (see --rcvbuf) is queued unread, so that its senders must back off\n"
                + ProgressReporter.USAGE
                + NetOptions.USAGE;
    }

    @Override
    public Set<String> valueOptions() {
        Set<String> s = new HashSet<>(NetOptions.VALUE_OPTIONS);
        s.addAll(Set.of("bind", "count", "timeout", "stall"));
        return s;
    }

    @Override
    public Set<String> flagOptions() {
        return Set.of("quiet");
    }

    @Override
    public int run(Args args, PrintStream out, PrintStream err) throws Exception {
        args.expectPositionals(0, 0);
        InetSocketAddress bind = Endpoints.parse("bind", args.required("bind"));
        args.required("count");
        long count = args.longValue("count", 0, 0, Long.MAX_VALUE);
        long timeout = args.secondsAsNanos("timeout", 60, 0.001, 1e6);
        long stall = args.secondsAsNanos("stall", 0, 0, 1e6);
        NetOptions net = NetOptions.from(args);

        try (RdsStack stack = net.createStack("recv", bind.getAddress());
             RdsSocket socket = net.openSocket(stack)) {
            // SO_RCVBUF (--rcvbuf) was set before bind by openSocket: the port's congestion limit from the start.
            socket.bind(bind);
            out.println("recv: listening on " + Endpoints.format(socket.localAddress()));
            out.flush();
            long stalled = stall(stall);
            long deadline = System.nanoTime() + timeout;
            StreamVerifier verifier = new StreamVerifier("rds4j recv", err);
            // Rates count from the first message: the sender usually starts after we are ready.
            long first = 0;
            boolean timedOut = false;
            // Read by the progress line once a second; written with ordered stores, no fence per message.
            AtomicLong received = new AtomicLong();
            AtomicLong receivedBytes = new AtomicLong();
            try (ProgressReporter reporter = ProgressReporter.start(args.flag("quiet"), err, "recv", received::get,
                    receivedBytes::get, count)) {
                while (verifier.messages() < count) {
                    long left = deadline - System.nanoTime();
                    Optional<RdsDatagram> d = left > 0 ? socket.receive(Duration.ofNanos(left)) : Optional.empty();
                    if (d.isEmpty()) {
                        timedOut = true;
                        break;
                    }
                    if (first == 0) {
                        first = System.nanoTime();
                    }
                    verifier.accept(d.get().source(), d.get().payload());
                    received.lazySet(verifier.messages());
                    receivedBytes.lazySet(verifier.bytes());
                }
            }
            long elapsed = first == 0 ? 0 : System.nanoTime() - first;
            boolean ok = !timedOut && verifier.problems() == 0;
            if (timedOut) {
                err.println("rds4j recv: timed out after " + verifier.messages() + " of " + count + " messages");
            }
            out.printf(Locale.ROOT, "recv: %s: %d messages (%d bytes) from %d sources in %s, %d msg/s, %s, %s%s%n",
                    ok ? "OK" : "FAILED", verifier.messages(), verifier.bytes(), verifier.sources(),
                    Format.seconds(elapsed), Format.perSecond(verifier.messages(), elapsed),
                    Format.megabytesPerSecond(verifier.bytes(), elapsed), verifier.problemCounts(),
                    stall == 0 ? "" : String.format(Locale.ROOT, "; stalled %s first, cong_update_queued=%d",
                            Format.seconds(stalled), stack.counters().getOrDefault("cong_update_queued", 0L)));
            return ok ? 0 : 1;
        }
    }

    /**
     * Reads nothing for {@code nanos}: messages keep arriving and queue on the socket (the receive buffer is a soft
     * limit), and the port is marked congested in the map sent to peers. Returns how long it really waited.
     */
    private static long stall(long nanos) throws InterruptedException {
        long start = System.nanoTime();
        long end = start + nanos;
        for (long left; (left = end - System.nanoTime()) > 0; ) {
            TimeUnit.NANOSECONDS.sleep(left);
        }
        return System.nanoTime() - start;
    }
}
