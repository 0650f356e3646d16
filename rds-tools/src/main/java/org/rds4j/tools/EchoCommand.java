package org.rds4j.tools;

import java.io.IOException;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.HashSet;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import org.rds4j.EbadfException;
import org.rds4j.EtimedoutException;
import org.rds4j.RdsDatagram;
import org.rds4j.RdsSocket;
import org.rds4j.RdsSocketOptions;
import org.rds4j.RdsStack;

/** {@code rds4j echo}: sends every message back to its source until killed; then prints a summary, exit 0. */
final class EchoCommand implements Command {
    /**
     * A peer that went away leaves its echoes stuck in our send buffer; past this wait an echo is dropped (and
     * counted) so that one dead peer cannot stall the echoes of the others.
     */
    private static final Duration SEND_TIMEOUT = Duration.ofSeconds(5);

    @Override
    public String name() {
        return "echo";
    }

    @Override
    public String description() {
        return "send every received message back to its source, until killed";
    }

    @Override
    public String usage() {
        return "usage: rds4j echo --bind ADDR:PORT [OPTIONS]\n\n"
                + "Prints 'echo: listening on ADDR:PORT' once bound, then echoes every message to its source\n"
                + "until SIGINT/SIGTERM, and prints a summary.\n\n"
                + "  --bind ADDR:PORT the local address and RDS port\n"
                + ProgressReporter.USAGE
                + NetOptions.USAGE;
    }

    @Override
    public Set<String> valueOptions() {
        Set<String> s = new HashSet<>(NetOptions.VALUE_OPTIONS);
        s.add("bind");
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
        NetOptions net = NetOptions.from(args);

        AtomicLong messages = new AtomicLong();
        AtomicLong bytes = new AtomicLong();
        AtomicLong dropped = new AtomicLong();
        long start = System.nanoTime();
        RdsStack stack = net.createStack("echo", bind.getAddress());
        RdsSocket socket = null;
        try {
            socket = net.openSocket(stack);
            socket.setOption(RdsSocketOptions.SO_SNDTIMEO, SEND_TIMEOUT);
            socket.bind(bind);
        } catch (IOException | RuntimeException e) {
            if (socket != null) {
                socket.close();
            }
            stack.close();
            throw e;
        }
        RdsSocket s = socket;
        Runnable summary = () -> out.printf(Locale.ROOT, "echo: %d messages (%d bytes) echoed in %s, %d msg/s, %s, "
                        + "%d dropped%n", messages.get(), bytes.get(), Format.seconds(System.nanoTime() - start),
                Format.perSecond(messages.get(), System.nanoTime() - start),
                Format.megabytesPerSecond(bytes.get(), System.nanoTime() - start), dropped.get());
        // Echo runs until killed: the progress line shows it alive and how fast; stopped before the summary.
        ProgressReporter progress = ProgressReporter.start(args.flag("quiet"), err, "echo", messages::get,
                bytes::get, -1);
        SignalExit exit = new SignalExit(() -> {
            s.close();
            progress.close();
            summary.run();
            out.flush();
            stack.close();
        }, () -> 0);
        out.println("echo: listening on " + Endpoints.format(s.localAddress()));
        out.flush();
        try {
            while (true) {
                RdsDatagram d = s.receive();
                try {
                    s.send(d.payload(), d.source());
                    messages.incrementAndGet();
                    bytes.addAndGet(d.length());
                } catch (EtimedoutException e) {
                    dropped.incrementAndGet();
                }
            }
        } catch (EbadfException closed) {
            if (!exit.finish()) {
                // The signal hook closed the socket: it prints the summary and ends the JVM with status 0.
                return 0;
            }
            progress.close();
            err.println("rds4j echo: socket closed unexpectedly");
            stack.close();
            return 1;
        } catch (IOException | RuntimeException e) {
            if (!exit.finish()) {
                return 0;
            }
            progress.close();
            err.println("rds4j echo: " + e);
            s.close();
            summary.run();
            stack.close();
            return 1;
        }
    }
}
