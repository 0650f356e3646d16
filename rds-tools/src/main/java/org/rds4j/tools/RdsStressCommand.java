package org.rds4j.tools;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NoRouteToHostException;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.rds4j.EinvalException;
import org.rds4j.EopnotsuppException;
import org.rds4j.RdsStack;
import org.rds4j.RdsStackConfig;

/**
 * {@code rds4j rds-stress}: rds-tools' rds-stress over RDS/TCP, both roles, speaking its control protocol so that
 * either side may be the kernel's rds-stress.
 *
 * <p>The control protocol: the passive side listens on TCP port {@code -p}; the active side connects, sends its
 * options record ({@link RdsStressOptions}), opens its tasks' sockets and sends one byte; the passive side, having
 * opened its own, answers with one byte. Both start their tasks two seconds later, print "Starting up" and a dot a
 * second for four seconds, then a line a second. The active side stops after {@code -T} seconds (never with 0) and
 * closes the control connection, which stops the passive side. Each prints the average line and exits 0; a task's
 * verification error ends the run with status 1.
 */
final class RdsStressCommand implements Command {
    private static final long SECOND = TimeUnit.SECONDS.toNanos(1);

    @Override
    public String name() {
        return "rds-stress";
    }

    @Override
    public String description() {
        return "rds-tools' rds-stress over RDS/TCP, either role, against the kernel's or another rds4j's";
    }

    @Override
    public String usage() {
        return RdsStressCli.USAGE;
    }

    @Override
    public boolean parsesOwnArguments() {
        return true;
    }

    @Override
    public Set<String> valueOptions() {
        return Set.of();
    }

    @Override
    public Set<String> flagOptions() {
        return Set.of();
    }

    @Override
    public int run(Args args, PrintStream out, PrintStream err) throws Exception {
        RdsStressCli.Parsed p = RdsStressCli.parse(args.positionals());
        if (p.help()) {
            out.print(usage());
            return 0;
        }
        for (String note : p.notes()) {
            err.println("rds-stress: " + note);
        }
        return p.active() ? active(p, out, err) : passive(p, out, err);
    }

    private static int active(RdsStressCli.Parsed p, PrintStream out, PrintStream err) throws Exception {
        RdsStressOptions o = p.options();
        if (o.showParams != 0) {
            out.printf(Locale.ROOT, "Options:%n  %-10s %-7d%n  %-10s %-7d%n  %-10s %-7d%n  %-10s %-7d%n",
                    "Tasks", o.nrTasks, "Req size", o.reqSize, "ACK size", o.ackSize, "RDMA size", o.rdmaSize);
            out.printf(Locale.ROOT, "  %-10s (defaults)%n%n", "RDMA opts");
        }
        InetAddress peer = inet(o.sendAddr);
        try (Socket control = connect(inet(o.receiveAddr), new InetSocketAddress(peer, o.startingPort),
                o.connectRetries, out)) {
            if (o.receiveAddr == 0) {
                o.receiveAddr = Integer.toUnsignedLong(RdsStressTask.addressBits(control.getLocalAddress()));
            }
            OutputStream cout = control.getOutputStream();
            InputStream cin = control.getInputStream();
            cout.write(o.encode());
            cout.flush();
            out.println("negotiated options, tasks will start in 2 seconds");
            try (Run run = new Run(o, true, p.flags(), inet(o.receiveAddr), peer, out, err)) {
                cout.write(1);
                cout.flush();
                readByte(cin);
                return run.release(control);
            }
        }
    }

    private static int passive(RdsStressCli.Parsed p, PrintStream out, PrintStream err) throws Exception {
        RdsStressOptions local = p.options();
        InetAddress bindAddr = inet(local.receiveAddr);
        Socket control;
        try (ServerSocket listener = new ServerSocket()) {
            listener.setReuseAddress(true);
            listener.bind(new InetSocketAddress(bindAddr, local.startingPort), 255);
            out.printf(Locale.ROOT, "waiting for incoming connection on %s:%d%n", bindAddr.getHostAddress(),
                    local.startingPort);
            out.flush();
            control = listener.accept();
        }
        try (Socket c = control) {
            StringBuilder line = new StringBuilder(String.format(Locale.ROOT, "accepted connection from %s:%d",
                    c.getInetAddress().getHostAddress(), c.getPort()));
            long receiveAddr = local.receiveAddr;
            if (receiveAddr == 0) {
                receiveAddr = Integer.toUnsignedLong(RdsStressTask.addressBits(c.getLocalAddress()));
                line.append(String.format(Locale.ROOT, " on %s:%d", c.getLocalAddress().getHostAddress(),
                        c.getLocalPort()));
            }
            out.println(line);
            InputStream cin = c.getInputStream();
            OutputStream cout = c.getOutputStream();
            RdsStressOptions o = readOptions(cin);
            checkPeerOptions(o);
            // The peer sent its own addresses: its receive address is where we send.
            o.sendAddr = o.receiveAddr;
            o.receiveAddr = receiveAddr;
            try (Run run = new Run(o, false, p.flags(), inet(o.receiveAddr), inet(o.sendAddr), out, err)) {
                readByte(cin);
                cout.write(1);
                cout.flush();
                out.println("negotiated options, tasks will start in 2 seconds");
                return run.release(c);
            }
        }
    }

    /** Reads either version of the options record, telling them apart as rds-stress does. */
    static RdsStressOptions readOptions(InputStream in) throws IOException, ToolFailure {
        byte[] first = readFully(in, RdsStressOptions.VERSION_BYTES);
        byte[] record;
        if (RdsStressOptions.announcesNewer(first)) {
            record = new byte[RdsStressOptions.V2_BYTES];
            System.arraycopy(first, 0, record, 0, first.length);
            byte[] rest = readFully(in, RdsStressOptions.V2_BYTES - first.length);
            System.arraycopy(rest, 0, record, first.length, rest.length);
        } else {
            record = new byte[RdsStressOptions.V1_BYTES];
            System.arraycopy(first, 0, record, 0, first.length);
            byte[] rest = readFully(in, RdsStressOptions.V1_BYTES - first.length);
            System.arraycopy(rest, 0, record, first.length, rest.length);
        }
        return RdsStressOptions.decode(record);
    }

    /** Refuses a peer's options this side cannot honour, saying which and why. */
    static void checkPeerOptions(RdsStressOptions o) throws EopnotsuppException, EinvalException {
        if (o.rdmaSize != 0) {
            throw new EopnotsuppException("the peer asks for RDMA (-D " + o.rdmaSize + "); rds4j runs RDS over TCP only: "
                    + "run the peer without -D");
        }
        if (o.tos != 0 || o.async != 0) {
            throw new EopnotsuppException("the peer asks for " + (o.tos != 0 ? "type of service " + o.tos : "--async")
                    + ", which rds4j does not have: run the peer without " + (o.tos != 0 ? "-Q" : "--async"));
        }
        if (o.reqDepth == 0 || o.reqDepth > 0xffff || o.nrTasks == 0 || o.reqSize < RdsStressHeader.BYTES
                || o.ackSize < RdsStressHeader.BYTES || o.reqSize > RdsStressCli.MAX_MESSAGE
                || o.ackSize > RdsStressCli.MAX_MESSAGE || o.startingPort + o.nrTasks > 0xffff) {
            throw new EinvalException(String.format(Locale.ROOT, "the peer's options are out of range (depth %d, tasks "
                            + "%d, req %d, ack %d bytes, port %d): is it rds-stress %s?", o.reqDepth, o.nrTasks,
                    o.reqSize, o.ackSize, o.startingPort, RdsStressOptions.VERSION));
        }
    }

    /** Connects the control connection from {@code local}, retrying a refused one as rds-stress does. */
    private static Socket connect(InetAddress local, InetSocketAddress to, long retries, PrintStream out)
            throws IOException, InterruptedException, ToolFailure {
        out.printf(Locale.ROOT, "connecting to %s:%d", to.getAddress().getHostAddress(), to.getPort());
        out.flush();
        for (long tried = 0; ; tried++) {
            // A failed connect closes its socket: every attempt needs a fresh one, bound as the first.
            Socket s = new Socket();
            try {
                s.setReuseAddress(true);
                s.bind(new InetSocketAddress(local, 0));
                s.connect(to, 10_000);
                out.println();
                return s;
            } catch (ConnectException | NoRouteToHostException e) {
                s.close();
                if (tried == 0) {
                    out.print(": " + e.getMessage());
                }
                if (tried >= retries) {
                    out.println();
                    throw new ToolFailure("connect(" + to.getAddress().getHostAddress() + ") failed: is a passive "
                            + "rds-stress listening on port " + to.getPort() + "? (--connect-retries N waits for it)");
                }
                out.print(tried == 0 ? " - retrying." : ".");
                out.flush();
                // rds-stress waits a second between attempts; so does this, to be told apart from it by nothing.
                TimeUnit.SECONDS.sleep(1);
            } catch (IOException | RuntimeException e) {
                s.close();
                throw e;
            }
        }
    }

    private static int readByte(InputStream in) throws IOException, ToolFailure {
        int b = in.read();
        if (b < 0) {
            throw new ToolFailure("Peer unexpectedly closed connection");
        }
        return b;
    }

    private static byte[] readFully(InputStream in, int n) throws IOException, ToolFailure {
        byte[] b = new byte[n];
        int got = 0;
        while (got < n) {
            int r = in.read(b, got, n - got);
            if (r < 0) {
                throw new ToolFailure("Peer unexpectedly closed connection (after " + got + " of " + n
                        + " bytes of the options record)");
            }
            got += r;
        }
        return b;
    }

    static InetAddress inet(long bits) throws IOException {
        return InetAddress.getByAddress(new byte[] {(byte) (bits >>> 24), (byte) (bits >>> 16), (byte) (bits >>> 8),
                (byte) bits});
    }

    /** The tasks of one side, their stack, and the reporting loop. */
    static final class Run implements AutoCloseable {
        private final RdsStressOptions o;
        private final boolean active;
        private final RdsStressCli.LocalFlags flags;
        private final PrintStream out;
        private final PrintStream err;
        private final RdsStack stack;
        private final List<RdsStressTask> tasks = new ArrayList<>();
        private final List<Thread> threads = new ArrayList<>();
        private final CountDownLatch failed = new CountDownLatch(1);
        private final AtomicReference<String> failure = new AtomicReference<>();
        private final CpuUse cpu;

        Run(RdsStressOptions o, boolean active, RdsStressCli.LocalFlags flags, InetAddress local, InetAddress peer,
                PrintStream out, PrintStream err) throws IOException {
            this.o = o;
            this.active = active;
            this.flags = flags;
            this.out = out;
            this.err = err;
            this.cpu = flags.reportCpu() ? new CpuUse() : null;
            this.stack = RdsStack.create(RdsStackConfig.builder().name("rds-stress").address(local)
                    .tcpPort(flags.tcpPort()).build());
            try {
                for (int i = 0; i < o.nrTasks; i++) {
                    RdsStressTask t = new RdsStressTask(stack, o, i, local, peer, active, flags, out, err,
                            this::taskFailed);
                    tasks.add(t);
                    Thread th = new Thread(t, "rds-stress-task-" + i);
                    th.setDaemon(true);
                    threads.add(th);
                }
            } catch (IOException | RuntimeException e) {
                close();
                throw e;
            }
        }

        private void taskFailed(int task, String message) {
            if (failure.compareAndSet(null, message)) {
                failed.countDown();
            }
        }

        /**
         * Starts the tasks two seconds from now, prints the start-up dots, the header and a line a second until the
         * run ends, then the closing average line.
         *
         * @return the exit status
         */
        int release(Socket control) throws IOException, InterruptedException {
            long start = System.nanoTime() + 2 * SECOND;
            for (int i = 0; i < tasks.size(); i++) {
                tasks.get(i).startAt(start);
                threads.get(i).start();
            }
            long[][] last = new long[tasks.size()][2 * RdsStressStats.COUNT];
            long[] disp = new long[2 * RdsStressStats.COUNT];
            out.print("Starting up");
            out.flush();
            for (int i = 0; i < 4; i++) {
                if (failed.await(1, TimeUnit.SECONDS)) {
                    return failure(out);
                }
                snapshot(last, disp);
                if (cpu != null) {
                    cpu.sample();
                }
                out.print(".");
                out.flush();
            }
            out.println();
            long firstTs = System.nanoTime();
            long end = o.runTime != 0 && active ? firstTs + o.runTime * SECOND : 0;
            out.printf(Locale.ROOT, "%4s %6s %6s %10s %10s %10s %7s %8s %5s%n", "tsks", "tx/s", "rx/s",
                    "tx+rx K/s", "mbi K/s", "mbo K/s", "tx us/c", "rtt us", "cpu %");
            long[] summary = new long[2 * RdsStressStats.COUNT];
            double cpuTotal = 0;
            long lastTs = firstTs;
            if (!active) {
                control.setSoTimeout(1000);
            }
            while (true) {
                if (active) {
                    if (failed.await(1, TimeUnit.SECONDS)) {
                        return failure(out);
                    }
                } else if (peerClosedOrSpoke(control)) {
                    break;
                }
                if (failed.getCount() == 0) {
                    return failure(out);
                }
                snapshot(last, disp);
                long now = System.nanoTime();
                double cpuNow = cpu != null ? cpu.sample() : -1.0;
                if (o.summaryOnly == 0) {
                    double scale = 1e9 / (now - lastTs);
                    out.printf(Locale.ROOT, "%4d %6d %6d %10.2f %10.2f %10.2f %7.2f %8.2f %5.2f%n", o.nrTasks,
                            disp[RdsStressStats.REQ_TX], disp[RdsStressStats.REQ_RX],
                            scale * throughput(disp) / 1024.0, 0.0, 0.0,
                            scale * avgMicros(disp, RdsStressStats.SEND_NANOS),
                            scale * avgMicros(disp, RdsStressStats.RTT_NANOS), scale * cpuNow);
                }
                for (int s = 0; s < summary.length; s++) {
                    summary[s] += disp[s];
                }
                cpuTotal += cpuNow;
                lastTs = now;
                if (end != 0 && now - end >= 0) {
                    break;
                }
            }
            // As rds-stress: close the control connection, let the tasks stop sending and drain for a second.
            control.close();
            tasks.forEach(RdsStressTask::stopSending);
            if (failed.await(1, TimeUnit.SECONDS)) {
                return failure(out);
            }
            if (o.summaryOnly == 0) {
                out.println("---------------------------------------------");
            }
            double scale = lastTs == firstTs ? 0 : 1e9 / (lastTs - firstTs);
            out.printf(Locale.ROOT, "%4d %6d %6d %10.2f %10.2f %10.2f %7.2f %8.2f %5.2f  (average)%n", o.nrTasks,
                    (long) (scale * summary[RdsStressStats.REQ_TX]), (long) (scale * summary[RdsStressStats.REQ_RX]),
                    scale * throughput(summary) / 1024.0, 0.0, 0.0,
                    avgMicros(summary, RdsStressStats.SEND_NANOS), avgMicros(summary, RdsStressStats.RTT_NANOS),
                    cpu != null ? scale * cpuTotal : -1.0);
            if (flags.showHistogram()) {
                printHistogram();
            }
            return 0;
        }

        private void printHistogram() {
            out.println();
            out.println("RTT histogram");
            out.println("RTT (us)        \t\t    Count");
            for (int b = 0; b < RdsStressStats.BUCKETS; b++) {
                long n = 0;
                for (RdsStressTask t : tasks) {
                    n += t.stats().bucketCount(b);
                }
                out.printf(Locale.ROOT, "[%6d - %6d] \t\t %8d%n", 1 << b, 1 << (b + 1), n);
            }
        }

        private int failure(PrintStream out) {
            out.flush();
            err.println("rds-stress: " + failure.get());
            return 1;
        }

        /** Waits up to a second for the peer to send or close; true if it did (the passive side's end). */
        private static boolean peerClosedOrSpoke(Socket control) throws IOException {
            try {
                control.getInputStream().read();
                return true;
            } catch (SocketTimeoutException quiet) {
                return false;
            } catch (IOException reset) {
                return true;
            }
        }

        /** Counts and sums since the last snapshot, over all tasks: [stat] counts, [COUNT + stat] sums. */
        private void snapshot(long[][] last, long[] disp) {
            java.util.Arrays.fill(disp, 0);
            for (int i = 0; i < tasks.size(); i++) {
                RdsStressStats st = tasks.get(i).stats();
                for (int s = 0; s < RdsStressStats.COUNT; s++) {
                    long nr = st.nr(s);
                    long sum = st.sum(s);
                    disp[s] += nr - last[i][s];
                    disp[RdsStressStats.COUNT + s] += sum - last[i][RdsStressStats.COUNT + s];
                    last[i][s] = nr;
                    last[i][RdsStressStats.COUNT + s] = sum;
                }
            }
        }

        private static double throughput(long[] d) {
            int c = RdsStressStats.COUNT;
            return d[c + RdsStressStats.REQ_TX] + d[c + RdsStressStats.REQ_RX] + d[c + RdsStressStats.ACK_TX]
                    + d[c + RdsStressStats.ACK_RX];
        }

        private static double avgMicros(long[] d, int stat) {
            long nr = d[stat];
            return nr == 0 ? 0.0 : d[RdsStressStats.COUNT + stat] / 1000.0 / nr;
        }

        @Override
        public void close() {
            for (RdsStressTask t : tasks) {
                t.close();
            }
            for (Thread t : threads) {
                try {
                    t.join(5000);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    break;
                }
            }
            stack.close();
        }
    }
}
