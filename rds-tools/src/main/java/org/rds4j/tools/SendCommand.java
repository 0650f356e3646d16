package org.rds4j.tools;

import java.io.IOException;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.HashSet;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.rds4j.EagainException;
import org.rds4j.EbadfException;
import org.rds4j.EnobufsException;
import org.rds4j.RdsDatagram;
import org.rds4j.RdsSelector;
import org.rds4j.RdsSocket;
import org.rds4j.RdsSocketOptions;
import org.rds4j.RdsStack;

/**
 * {@code rds4j send}: sends N pattern messages to one destination, optionally checking the echoes, and waits until
 * every message has left the send buffer before closing (closing would discard the rest, as in the kernel).
 *
 * <p>With {@code --nonblocking} the socket does not block: a send that finds the send buffer full (EAGAIN) waits
 * for the socket to become writable with an {@link RdsSelector}, and one refused because the destination port is
 * congested (ENOBUFS) waits for the {@link RdsDatagram.Kind#CONGESTION_UPDATE} notification of
 * {@link RdsSocketOptions#RDS_CONG_MONITOR}, as a program written for the kernel's RDS would; both waits are
 * bounded, and the message is then sent again. The summary counts both errors.
 */
final class SendCommand implements Command {
    private static final int MAX_MESSAGE = 1 << 20;

    @Override
    public String name() {
        return "send";
    }

    @Override
    public String description() {
        return "send N pattern messages to ADDR:PORT, optionally verifying their echoes";
    }

    @Override
    public String usage() {
        return "usage: rds4j send --bind ADDR:PORT --to ADDR:PORT [OPTIONS]\n\n"
                + "Sends --count pattern messages; with --expect-echo also receives and checks the echoes.\n"
                + "Exits 1 on any lost, duplicate, reordered or corrupt echo, or when --timeout passes.\n\n"
                + "  --bind ADDR:PORT the local address and RDS port (port 0: any free port)\n"
                + "  --to ADDR:PORT   the destination\n"
                + "  --count N        messages to send (default 1000)\n"
                + "  --size BYTES     message size, 0.." + MAX_MESSAGE + " (default 64)\n"
                + "  --expect-echo    receive the echoes (rds4j echo) and verify them\n"
                + "  --nonblocking    non-blocking socket: on EAGAIN (send buffer full) wait until it is writable,\n"
                + "                   on ENOBUFS (destination congested) wait for the RDS_CONG_MONITOR notification,\n"
                + "                   then retry; the summary counts both (eagain=N enobufs=M)\n"
                + "  --timeout S      give up after S seconds (default 60)\n"
                + ProgressReporter.USAGE
                + NetOptions.USAGE;
    }

    @Override
    public Set<String> valueOptions() {
        Set<String> s = new HashSet<>(NetOptions.VALUE_OPTIONS);
        s.addAll(Set.of("bind", "to", "count", "size", "timeout"));
        return s;
    }

    @Override
    public Set<String> flagOptions() {
        return Set.of("expect-echo", "nonblocking", "quiet");
    }

    @Override
    public int run(Args args, PrintStream out, PrintStream err) throws Exception {
        args.expectPositionals(0, 0);
        InetSocketAddress bind = Endpoints.parse("bind", args.required("bind"));
        InetSocketAddress to = Endpoints.parse("to", args.required("to"));
        long count = args.longValue("count", 1000, 0, Long.MAX_VALUE);
        int size = args.intValue("size", 64, 0, MAX_MESSAGE);
        long timeout = args.secondsAsNanos("timeout", 60, 0.001, 1e6);
        boolean expectEcho = args.flag("expect-echo");
        boolean nonBlocking = args.flag("nonblocking");
        NetOptions net = NetOptions.from(args);

        try (RdsStack stack = net.createStack("send", bind.getAddress());
             RdsSocket socket = net.openSocket(stack);
             RdsSelector selector = nonBlocking ? RdsSelector.open(stack) : null) {
            socket.bind(bind);
            long start = System.nanoTime();
            long deadline = start + timeout;
            EchoReceiver echoes = expectEcho ? new EchoReceiver(socket, to, count, deadline, err) : null;
            NonBlockingSender nb = null;
            if (nonBlocking) {
                socket.configureBlocking(false);
                // On before the first send: a refused send only adds its port to the monitor mask while it is on.
                socket.setOption(RdsSocketOptions.RDS_CONG_MONITOR, true);
                selector.register(socket, RdsSelector.OP_WRITE);
                nb = new NonBlockingSender(socket, selector, echoes, deadline);
            }
            long sent = 0;
            boolean drained = false;
            String failure = null;
            // Read by the progress line once a second; written with an ordered store, no fence per message.
            AtomicLong progress = new AtomicLong();
            // Closing the socket at the deadline is what bounds a send blocked on a full buffer or congestion.
            try (Watchdog watchdog = Watchdog.start(deadline, socket::close);
                 ProgressReporter reporter = ProgressReporter.start(args.flag("quiet"), err, "send",
                         progress::get, () -> progress.get() * size, count)) {
                if (echoes != null) {
                    echoes.start();
                }
                ByteBuffer buffer = ByteBuffer.allocate(size);
                try {
                    for (; sent < count; sent++) {
                        buffer.clear();
                        PayloadPattern.fill(buffer, sent, size);
                        buffer.flip();
                        if (nb != null) {
                            nb.send(buffer, to);
                        } else {
                            socket.send(buffer, to);
                        }
                        progress.lazySet(sent + 1);
                    }
                    drained = socket.awaitSent(Duration.ofNanos(Math.max(0, deadline - System.nanoTime())));
                    if (echoes != null) {
                        echoes.join(deadline);
                    }
                } catch (EbadfException closed) {
                    failure = watchdog.fired() ? "timed out" : closed.toString();
                } catch (NonBlockingSender.TimedOut e) {
                    failure = "timed out";
                } catch (IOException e) {
                    failure = e.toString();
                }
                if (failure == null && watchdog.fired()) {
                    failure = "timed out";
                }
            }
            long elapsed = System.nanoTime() - start;
            if (failure == null && !drained) {
                failure = "timed out waiting for the send buffer to empty";
            }
            if (failure == null && echoes != null) {
                failure = echoes.failure();
            }
            if (failure != null) {
                err.println("rds4j send: " + failure + " after " + sent + " of " + count + " messages");
            }
            out.printf(Locale.ROOT, "send: %s: %d messages of %d bytes to %s in %s, %d msg/s, %s%s; %s%n",
                    failure == null ? "OK" : "FAILED", sent, size, Endpoints.format(to), Format.seconds(elapsed),
                    Format.perSecond(sent, elapsed), Format.megabytesPerSecond(sent * size, elapsed),
                    echoes == null ? "" : "; echoes: " + echoes.summary(),
                    nb != null ? nb.summary() : blockingSummary(stack));
            return failure == null ? 0 : 1;
        }
    }

    /**
     * What the stack's counters say about a blocking sender's waits: {@code cong_send_blocked} counts sends that
     * found their destination congested and waited, {@code send_queue_full} sends that found the send buffer full.
     * The stack is this tool's own, so the counts are this socket's.
     */
    static String blockingSummary(RdsStack stack) {
        java.util.Map<String, Long> c = stack.counters();
        return "blocking: cong_send_blocked=" + c.getOrDefault("cong_send_blocked", 0L)
                + " send_queue_full=" + c.getOrDefault("send_queue_full", 0L);
    }

    /**
     * Sends on a non-blocking socket the way a poll-based program does with the kernel's RDS: EAGAIN waits for
     * {@link RdsSelector#OP_WRITE}, ENOBUFS for the congestion notification, each wait bounded (the notification can
     * be missed if the map changed while the send was being refused, so the bound is what guarantees progress).
     */
    static class NonBlockingSender {
        /** Longest single wait before sending again: short, so a missed wake-up costs little. */
        static final long MAX_WAIT_NANOS = TimeUnit.MILLISECONDS.toNanos(200);

        private final RdsSocket socket;
        private final RdsSelector selector;
        private final EchoReceiver echoes;
        private final long deadline;
        long eagain;
        long enobufs;
        long congestionUpdates;
        long waitsTimedOut;

        NonBlockingSender(RdsSocket socket, RdsSelector selector, EchoReceiver echoes, long deadline) {
            this.socket = socket;
            this.selector = selector;
            this.echoes = echoes;
            this.deadline = deadline;
        }

        /** Sends {@code buffer} to {@code to}, waiting and retrying on EAGAIN and ENOBUFS until the deadline. */
        void send(ByteBuffer buffer, InetSocketAddress to) throws IOException, InterruptedException {
            while (true) {
                try {
                    socket.send(buffer, to);
                    return;
                } catch (EagainException e) {
                    eagain++;
                    awaitWritable();
                } catch (EnobufsException e) {
                    enobufs++;
                    onEnobufs();
                    awaitCongestionUpdate();
                }
                if (System.nanoTime() - deadline >= 0) {
                    throw new TimedOut();                    // the watchdog closes the socket about now
                }
            }
        }

        /** Called after each ENOBUFS, before waiting; for tests. */
        void onEnobufs() {
        }

        private long waitNanos() {
            return Math.max(1, Math.min(MAX_WAIT_NANOS, deadline - System.nanoTime()));
        }

        /**
         * Until the send buffer has room (level-triggered: at once if it has already). A selector may wake for a
         * change that left the socket unwritable, hence the loop.
         */
        private void awaitWritable() throws IOException {
            long until = System.nanoTime() + waitNanos();
            int[] ready = {0};
            for (long left; ready[0] == 0 && (left = until - System.nanoTime()) > 0; ) {
                selector.select(Duration.ofNanos(left), (s, ops) -> ready[0] = ops);
            }
            if (ready[0] == 0) {
                waitsTimedOut++;
            }
        }

        /**
         * Until a congestion map arrives: the refused send put the destination port in the monitor mask, and the
         * next map update from the peer fires it as a {@link RdsDatagram.Kind#CONGESTION_UPDATE}. With
         * {@code --expect-echo} another thread receives, and hands notifications over.
         */
        private void awaitCongestionUpdate() throws IOException, InterruptedException {
            long until = System.nanoTime() + waitNanos();
            if (echoes != null) {
                if (echoes.awaitCongestionUpdate(until)) {
                    congestionUpdates++;
                } else {
                    waitsTimedOut++;
                }
                return;
            }
            while (true) {
                long left = until - System.nanoTime();
                Optional<RdsDatagram> d = left > 0 ? socket.receive(Duration.ofNanos(left)) : Optional.empty();
                if (d.isEmpty()) {
                    waitsTimedOut++;
                    return;
                }
                if (d.get().kind() == RdsDatagram.Kind.CONGESTION_UPDATE) {
                    congestionUpdates++;
                    return;
                }
                // A message nobody asked for (send expects none): dropped, as before this tool received at all.
            }
        }

        /** The deadline passed while retrying. */
        static final class TimedOut extends IOException {
            private static final long serialVersionUID = 1L;

            TimedOut() {
                super("timed out");
            }
        }

        String summary() {
            return "nonblocking: eagain=" + eagain + " enobufs=" + enobufs + " cong_updates=" + congestionUpdates
                    + " waits_timed_out=" + waitsTimedOut;
        }
    }

    /** Receives and checks the echoes on its own thread, so that unread echoes never congest our port. */
    private static final class EchoReceiver {
        private final RdsSocket socket;
        private final InetSocketAddress from;
        private final long count;
        private final long deadline;
        private final StreamVerifier verifier;
        private final Thread thread;
        private long unexpected;
        private IOException error;
        /** Congestion notifications received and not yet taken by the sender; guarded by {@code this}. */
        private long congestionUpdates;

        EchoReceiver(RdsSocket socket, InetSocketAddress from, long count, long deadline, PrintStream err) {
            this.socket = socket;
            this.from = from;
            this.count = count;
            this.deadline = deadline;
            this.verifier = new StreamVerifier("rds4j send", err);
            this.thread = new Thread(this::run, "rds4j-send-echoes");
            this.thread.setDaemon(true);
        }

        void start() {
            thread.start();
        }

        private void run() {
            try {
                while (verifier.messages() < count) {
                    long left = deadline - System.nanoTime();
                    Optional<RdsDatagram> d = left > 0 ? socket.receive(Duration.ofNanos(left)) : Optional.empty();
                    if (d.isEmpty()) {
                        return;
                    }
                    if (d.get().kind() == RdsDatagram.Kind.CONGESTION_UPDATE) {
                        synchronized (this) {
                            congestionUpdates++;
                            notifyAll();
                        }
                    } else if (d.get().kind() != RdsDatagram.Kind.DATA) {
                        unexpected++;
                    } else if (d.get().source().equals(from)) {
                        verifier.accept(from, d.get().payload());
                    } else {
                        unexpected++;
                    }
                }
            } catch (EbadfException closed) {
                // The watchdog closed the socket: the counts tell what is missing.
            } catch (IOException e) {
                error = e;
            }
        }

        /** Waits until this thread has received a congestion notification, or {@code untilNanos}; takes it. */
        synchronized boolean awaitCongestionUpdate(long untilNanos) throws InterruptedException {
            while (congestionUpdates == 0) {
                long left = untilNanos - System.nanoTime();
                if (left <= 0 || !thread.isAlive()) {
                    return false;
                }
                TimeUnit.NANOSECONDS.timedWait(this, left);
            }
            congestionUpdates = 0;
            return true;
        }

        /** Waits for the receiving thread, at most until the deadline plus a moment for it to notice. */
        void join(long deadlineNanos) throws InterruptedException {
            long left = deadlineNanos - System.nanoTime() + TimeUnit.SECONDS.toNanos(1);
            thread.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
        }

        /** Null if every echo came back intact and in order. Call after {@link #join}. */
        String failure() {
            if (error != null) {
                return "receiving echoes: " + error;
            }
            if (missing() > 0 || verifier.problems() > 0 || unexpected > 0) {
                return "echoes incomplete or wrong";
            }
            return null;
        }

        /** Echoes not received at all, beyond the gaps the verifier saw. */
        private long missing() {
            return Math.max(0, count - verifier.messages() - verifier.lost() + verifier.duplicates());
        }

        String summary() {
            return verifier.messages() + " received, " + (verifier.lost() + missing()) + " lost, "
                    + verifier.duplicates() + " duplicate, " + verifier.reordered() + " reordered, "
                    + verifier.corrupt() + " corrupt, " + unexpected + " unexpected";
        }
    }
}
