package org.rds4j.tools;

import java.io.IOException;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.HdrHistogram.Histogram;
import org.rds4j.RdsSocket;
import org.rds4j.RdsSocketOptions;
import org.rds4j.RdsStack;
import org.rds4j.RdsStackConfig;

/**
 * {@code rds4j stress}: two stacks in one JVM, "hosts" 127.0.0.1 (A) and 127.0.0.2 (B) on the same TCP port, and N
 * socket pairs; A's socket i keeps a window of requests outstanding to B's socket i, which echoes each one back.
 * Socket pair i binds RDS port {@code --port} + i on both hosts, as rds-stress's task i binds 4001 + i: each pair's
 * requests and echoes then hash to the same lane, every run spreads the pairs over the same lanes, and echoes carry
 * the acknowledgements of the requests back on the lane those came on.
 * Every message is checked in both directions; a live line per second, then a summary. Exit 1 on any loss,
 * corruption or reordering, or if nothing got through.
 */
final class StressCommand implements Command {
    private static final int MAX_MESSAGE = 1 << 20;
    /** Socket pair 0's RDS port unless {@code --port} says otherwise: rds-stress's first task binds 4001. */
    private static final int FIRST_PORT = 4001;
    private static final int MAX_PORT = 65535;
    /** How long the outstanding echoes may take once sending stops before they count as lost. */
    private static final long DRAIN_NANOS = TimeUnit.SECONDS.toNanos(10);
    /** How long --pin waits for the first echo before it places the stacks' threads (they start with it). */
    private static final long FIRST_ECHO_NANOS = TimeUnit.SECONDS.toNanos(10);
    private static final String STACK_A = "stress-a";
    private static final String STACK_B = "stress-b";
    private static final String REQUESTER_THREAD = "stress-request-";
    private static final String ECHOER_THREAD = "stress-echo-";

    @Override
    public String name() {
        return "stress";
    }

    @Override
    public String description() {
        return "request/echo load between two stacks in this JVM, with checks and latency percentiles";
    }

    @Override
    public String usage() {
        return "usage: rds4j stress [OPTIONS]\n\n"
                + "Creates stack A (127.0.0.1) and stack B (127.0.0.2) in this JVM; A's socket i sends pattern\n"
                + "messages to B's socket i, which echoes them back. Prints a line per second and a summary;\n"
                + "exits 1 on any lost, corrupt or reordered message.\n\n"
                + "  --sockets N      socket pairs (default 4)\n"
                + "  --depth N        requests outstanding per socket (default 16)\n"
                + "  --size BYTES     message size, 0.." + MAX_MESSAGE + " (default 64)\n"
                + "  --duration S     measured seconds (default 10)\n"
                + "  --warmup S       seconds before measuring, at least (default 1): the warm-up goes on while the\n"
                + "                   JVM's compilers and collector keep a tenth of a core busy, up to 10 times S\n"
                + "  --pin            host A's threads (requesters, stack A's I/O and timer threads) on one CPU,\n"
                + "                   host B's on another, through taskset (Linux, two CPUs)\n"
                + "  --port P         RDS port of socket pair 0 on both hosts; pair i uses P+i (default 4001,\n"
                + "                   rds-stress's first task port); 0 binds every socket to a free port\n"
                + NetOptions.USAGE
                + "                   (--sndbuf/--rcvbuf default to at least twice the window's bytes, so that\n"
                + "                    echoes never wait for congestion to clear)\n";
    }

    @Override
    public Set<String> valueOptions() {
        Set<String> s = new HashSet<>(NetOptions.VALUE_OPTIONS);
        s.addAll(Set.of("sockets", "depth", "size", "duration", "warmup", "port"));
        return s;
    }

    @Override
    public Set<String> flagOptions() {
        return Set.of("pin");
    }

    @Override
    public int run(Args args, PrintStream out, PrintStream err) throws Exception {
        args.expectPositionals(0, 0);
        int sockets = args.intValue("sockets", 4, 1, 1024);
        int depth = args.intValue("depth", 16, 1, 1 << 16);
        int size = args.intValue("size", 64, 0, MAX_MESSAGE);
        long duration = args.secondsAsNanos("duration", 10, 0.001, 1e6);
        long warmup = args.secondsAsNanos("warmup", 1, 0, 1e6);
        int port = args.intValue("port", FIRST_PORT, 0, MAX_PORT);
        if (port != 0 && port + sockets - 1 > MAX_PORT) {
            throw new UsageException("--port " + port + " leaves no room for " + sockets + " socket pairs (the last"
                    + " would bind " + (port + sockets - 1) + "); give at most " + (MAX_PORT - sockets + 1)
                    + ", or 0 for free ports");
        }
        NetOptions net = NetOptions.from(args);
        ThreadPlacement placement = null;
        if (args.flag("pin")) {
            try {
                placement = ThreadPlacement.onThisMachine();
            } catch (IllegalStateException e) {
                throw new ToolFailure(e.getMessage());
            }
        }
        InetAddress hostA = InetAddress.getByName("127.0.0.1");
        InetAddress hostB = InetAddress.getByName("127.0.0.2");
        // The window must fit in the receive budget (half of SO_RCVBUF's doubled value, i.e. the value set), or a
        // full window congests the port and echoes wait; and a message must fit in the send budget.
        int buffer = (int) Math.min(Integer.MAX_VALUE / 2,
                Math.max(RdsStackConfig.DEFAULT_SOCKET_BUFFER, 2L * depth * Math.max(size, 64)));

        out.printf(Locale.ROOT, "stress: %d socket pairs %s <-> %s (%s), transport %s, tcp port %d, %d paths, "
                        + "%d-byte messages, depth %d, %s measured after %s warmup%s%n", sockets, Endpoints.host(hostA),
                Endpoints.host(hostB), ports(port, sockets), net.transport, net.tcpPort, net.paths, size, depth,
                Format.seconds(duration), Format.seconds(warmup), warmup > 0 ? " or more" : "");
        out.flush();

        StressStats stats = new StressStats();
        List<RdsSocket> opened = new ArrayList<>();
        List<StressRequester> requesters = new ArrayList<>();
        List<Thread> requesterThreads = new ArrayList<>();
        List<Thread> echoerThreads = new ArrayList<>();
        try (RdsStack a = net.createStack(STACK_A, hostA);
             RdsStack b = net.createStack(STACK_B, hostB)) {
            for (int i = 0; i < sockets; i++) {
                int pairPort = port == 0 ? 0 : port + i;
                RdsSocket sa = open(net, a, hostA, pairPort, buffer, opened);
                RdsSocket sb = open(net, b, hostB, pairPort, buffer, opened);
                StressRequester r = new StressRequester(sa, sb.localAddress(), depth, size, stats);
                requesters.add(r);
                requesterThreads.add(daemon(new Thread(r, REQUESTER_THREAD + i)));
                echoerThreads.add(daemon(new Thread(new StressEchoer(sb, sa.localAddress(), size, stats),
                        ECHOER_THREAD + i)));
            }
            Measurement m = measure(stats, warmup, duration, out, echoerThreads, requesterThreads, placement);
            drain(requesters, requesterThreads, opened);
            // Every echo is back (or counted lost): closing the echo sockets now drops nothing.
            closeAll(opened);
            joinAll(echoerThreads, TimeUnit.SECONDS.toNanos(5));
            return report(m, stats, size, out, err);
        } finally {
            closeAll(opened);
        }
    }

    /** The ports the header names: one, a range, or free ones. */
    private static String ports(int first, int sockets) {
        if (first == 0) {
            return "free ports";
        }
        return sockets == 1 ? "port " + first : "ports " + first + "-" + (first + sockets - 1);
    }

    private static RdsSocket open(NetOptions net, RdsStack stack, InetAddress host, int port, int buffer,
            List<RdsSocket> opened) throws IOException {
        RdsSocket s = net.openSocket(stack);
        opened.add(s);
        if (net.sndbuf == 0) {
            s.setOption(RdsSocketOptions.SO_SNDBUF, buffer);
        }
        if (net.rcvbuf == 0) {
            s.setOption(RdsSocketOptions.SO_RCVBUF, buffer);
        }
        s.bind(new InetSocketAddress(host, port));
        return s;
    }

    /** The counters at the start and end of the measured interval. */
    private record Measurement(long nanos, long messages, long bytes, Histogram roundTrips) {
    }

    private static Measurement measure(StressStats stats, long warmup, long duration, PrintStream out,
            List<Thread> echoers, List<Thread> requesters, ThreadPlacement placement) throws InterruptedException {
        try (RateReporter reporter = new RateReporter(out, stats::messages, stats::bytes, stats::roundTrips)) {
            reporter.phase(warmup > 0 ? "warmup" : "");
            echoers.forEach(Thread::start);
            requesters.forEach(Thread::start);
            reporter.start();
            if (placement != null) {
                place(placement);
                // A stack starts its I/O threads with its first connection: placed once an echo shows both are up.
                stats.awaitFirstRoundTrip(FIRST_ECHO_NANOS);
                place(placement);
                out.printf(Locale.ROOT, "stress: host A's threads (requesters, stack A's) pinned to CPU %d, host B's"
                        + " (echoers, stack B's) to CPU %d%n", placement.cpu(true), placement.cpu(false));
            }
            if (warmup > 0 && !warmUp(Warmup.ofThisJvm(warmup), stats, out)) {
                return new Measurement(0, 0, 0, StressStats.emptyRoundTrips());
            }
            reporter.phase("");
            stats.measuring(true);
            long t0 = System.nanoTime();
            long m0 = stats.messages();
            long b0 = stats.bytes();
            Histogram h0 = stats.roundTrips();
            stats.failed().await(duration, TimeUnit.NANOSECONDS);
            long t1 = System.nanoTime();
            long m1 = stats.messages();
            long b1 = stats.bytes();
            Histogram h1 = stats.roundTrips();
            stats.measuring(false);
            h1.subtract(h0);
            return new Measurement(t1 - t0, m1 - m0, b1 - b0, h1);
        }
    }

    /**
     * {@code --pin}: each host's threads on its CPU, the requesters and stack A's on the first, the echoers and stack
     * B's on the second (the loopback thread the stacks share has no host and is left to the scheduler). Placing a
     * thread twice does no harm.
     */
    private static void place(ThreadPlacement placement) {
        placement.pinThreadsNamed(REQUESTER_THREAD, true);
        placement.pinThreadsNamed("rds4j-" + STACK_A + "-", true);
        placement.pinThreadsNamed(ECHOER_THREAD, false);
        placement.pinThreadsNamed("rds4j-" + STACK_B + "-", false);
    }

    /**
     * Runs the warm-up: its minimum, then on a second at a time while the JVM's own threads are busy ({@link Warmup}).
     * Waiting on the failure latch doubles as the timer: the first error ends the run at once.
     *
     * @return false if a worker failed during it
     */
    private static boolean warmUp(Warmup warmup, StressStats stats, PrintStream out) throws InterruptedException {
        long start = System.nanoTime();
        long look = Math.min(Warmup.SLICE_NANOS, warmup.minNanos());
        if (stats.failed().await(warmup.minNanos() - look, TimeUnit.NANOSECONDS)) {
            return false;
        }
        while (true) {
            long t0 = System.nanoTime();
            long b0 = warmup.backgroundCpuNanos();
            if (stats.failed().await(look, TimeUnit.NANOSECONDS)) {
                return false;
            }
            long b1 = warmup.backgroundCpuNanos();
            long t1 = System.nanoTime();
            long background = b0 < 0 || b1 < 0 ? -1 : b1 - b0;
            long elapsed = t1 - start;
            if (warmup.ends(elapsed, background, t1 - t0)) {
                if (elapsed >= warmup.maxNanos() && background >= Warmup.QUIET_SHARE * (t1 - t0)) {
                    out.printf(Locale.ROOT, "stress: warm-up ended at its bound of %s with the JVM's compilers and"
                            + " collector still busy (%d %% of a core in its last second)%n",
                            Format.seconds(elapsed), Math.round(100.0 * background / (t1 - t0)));
                } else if (elapsed - look > warmup.minNanos()) {
                    out.printf(Locale.ROOT, "stress: warm-up went on to %s, until the JVM's compilers and collector"
                            + " used less than a tenth of a core for a second%n", Format.seconds(elapsed));
                }
                return true;
            }
        }
    }

    /** Stops new requests and waits for the outstanding echoes; closes the sockets of requesters still waiting. */
    private static void drain(List<StressRequester> requesters, List<Thread> threads, List<RdsSocket> opened)
            throws InterruptedException {
        requesters.forEach(StressRequester::stopSending);
        joinAll(threads, DRAIN_NANOS);
        boolean stuck = false;
        for (StressRequester r : requesters) {
            stuck |= !r.finished();
        }
        if (stuck) {
            // A lost echo would block its requester forever; closing wakes it and it reports the loss.
            closeAll(opened);
            joinAll(threads, TimeUnit.SECONDS.toNanos(5));
        }
    }

    private static int report(Measurement m, StressStats stats, int size, PrintStream out, PrintStream err) {
        for (String d : stats.details()) {
            err.println("stress: " + d);
        }
        boolean ok = stats.errors() == 0 && m.messages() > 0;
        if (stats.errors() == 0 && m.messages() == 0) {
            err.println("stress: no message got through in the measured interval");
        }
        out.printf(Locale.ROOT, "stress: %s: %d messages (%d round trips) of %d bytes in %s, %d msg/s, %s, "
                        + "rtt p50 %d us p99 %d us max %d us, %d errors%n",
                ok ? "OK" : "FAILED", m.messages(), m.roundTrips().getTotalCount(), size, Format.seconds(m.nanos()),
                Format.perSecond(m.messages(), m.nanos()), Format.megabytesPerSecond(m.bytes(), m.nanos()),
                Format.micros(percentile(m.roundTrips(), 50)), Format.micros(percentile(m.roundTrips(), 99)),
                Format.micros(stats.maxRoundTrip()), stats.errors());
        return ok ? 0 : 1;
    }

    /** The value at {@code percent}, 0 for an empty histogram. */
    static long percentile(Histogram h, double percent) {
        return h.getTotalCount() == 0 ? 0 : h.getValueAtPercentile(percent);
    }

    private static void joinAll(List<Thread> threads, long timeoutNanos) throws InterruptedException {
        long deadline = System.nanoTime() + timeoutNanos;
        for (Thread t : threads) {
            long left = deadline - System.nanoTime();
            if (left > 0 && t.isAlive()) {
                t.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
            }
        }
    }

    /** A worker stuck despite every bound must not keep the JVM alive after the summary. */
    private static Thread daemon(Thread t) {
        t.setDaemon(true);
        return t;
    }

    private static void closeAll(List<RdsSocket> sockets) {
        for (RdsSocket s : sockets) {
            s.close();
        }
    }
}
