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
import org.rds4j.EbadfException;
import org.rds4j.RdsDatagram;
import org.rds4j.RdsSocket;
import org.rds4j.RdsStack;

/**
 * {@code rds4j send}: sends N pattern messages to one destination, optionally checking the echoes, and waits until
 * every message has left the send buffer before closing (closing would discard the rest, as in the kernel).
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
                + "  --timeout S      give up after S seconds (default 60)\n"
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
        return Set.of("expect-echo");
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
        NetOptions net = NetOptions.from(args);

        try (RdsStack stack = net.createStack("send", bind.getAddress());
             RdsSocket socket = net.openSocket(stack)) {
            socket.bind(bind);
            long start = System.nanoTime();
            long deadline = start + timeout;
            EchoReceiver echoes = expectEcho ? new EchoReceiver(socket, to, count, deadline, err) : null;
            long sent = 0;
            boolean drained = false;
            String failure = null;
            // Closing the socket at the deadline is what bounds a send blocked on a full buffer or congestion.
            try (Watchdog watchdog = Watchdog.start(deadline, socket::close)) {
                if (echoes != null) {
                    echoes.start();
                }
                ByteBuffer buffer = ByteBuffer.allocate(size);
                try {
                    for (; sent < count; sent++) {
                        buffer.clear();
                        PayloadPattern.fill(buffer, sent, size);
                        buffer.flip();
                        socket.send(buffer, to);
                    }
                    drained = socket.awaitSent(Duration.ofNanos(Math.max(0, deadline - System.nanoTime())));
                    if (echoes != null) {
                        echoes.join(deadline);
                    }
                } catch (EbadfException closed) {
                    failure = watchdog.fired() ? "timed out" : closed.toString();
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
            out.printf(Locale.ROOT, "send: %s: %d messages of %d bytes to %s in %s, %d msg/s, %s%s%n",
                    failure == null ? "OK" : "FAILED", sent, size, Endpoints.format(to), Format.seconds(elapsed),
                    Format.perSecond(sent, elapsed), Format.megabytesPerSecond(sent * size, elapsed),
                    echoes == null ? "" : "; echoes: " + echoes.summary());
            return failure == null ? 0 : 1;
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
                    if (d.get().source().equals(from)) {
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
