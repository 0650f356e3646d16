package org.rds4j.tools;

import java.io.PrintStream;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.HdrHistogram.Histogram;

/**
 * Prints one live line per second: messages/s, MB/s and, if given a histogram, the round-trip p50/p99 of that
 * second. It runs on its own daemon thread and reads counters the workers update, so the workers never format or
 * print anything.
 */
final class RateReporter implements AutoCloseable {
    private final PrintStream out;
    private final LongSupplier messages;
    private final LongSupplier bytes;
    private final Supplier<Histogram> latencies;
    private final Thread thread;
    private volatile String phase = "";
    private volatile boolean running = true;

    /** @param latencies copies of the round-trip times so far, in nanoseconds, or null to print rates only */
    RateReporter(PrintStream out, LongSupplier messages, LongSupplier bytes, Supplier<Histogram> latencies) {
        this.out = out;
        this.messages = messages;
        this.bytes = bytes;
        this.latencies = latencies;
        this.thread = new Thread(this::run, "rds4j-rate-reporter");
        this.thread.setDaemon(true);
    }

    RateReporter start() {
        thread.start();
        return this;
    }

    /** A word printed on each line from now on, such as "warmup"; empty for none. */
    void phase(String phase) {
        this.phase = phase;
    }

    private void run() {
        long start = System.nanoTime();
        long lastTime = start;
        long lastMessages = messages.getAsLong();
        long lastBytes = bytes.getAsLong();
        Histogram lastLatencies = latencies != null ? latencies.get() : null;
        // Ticks are scheduled from the start, not from the previous print, so lines do not drift.
        for (long tick = 1; running; tick++) {
            // A line is labelled with the phase its second began in.
            String label = phase;
            long due = start + TimeUnit.SECONDS.toNanos(tick);
            for (long wait; running && (wait = due - System.nanoTime()) > 0; ) {
                LockSupport.parkNanos(this, wait);
            }
            if (!running) {
                return;
            }
            long now = System.nanoTime();
            long m = messages.getAsLong();
            long b = bytes.getAsLong();
            long elapsed = now - lastTime;
            StringBuilder line = new StringBuilder(String.format(Locale.ROOT, "[%4d s] %10d msg/s %12s",
                    tick, Format.perSecond(m - lastMessages, elapsed), Format.megabytesPerSecond(b - lastBytes, elapsed)));
            if (latencies != null) {
                Histogram current = latencies.get();
                Histogram second = current.copy();
                second.subtract(lastLatencies);
                line.append(String.format(Locale.ROOT, "   rtt p50 %6d us  p99 %6d us",
                        Format.micros(StressCommand.percentile(second, 50)),
                        Format.micros(StressCommand.percentile(second, 99))));
                lastLatencies = current;
            }
            if (!label.isEmpty()) {
                line.append("   (").append(label).append(')');
            }
            out.println(line);
            out.flush();
            lastTime = now;
            lastMessages = m;
            lastBytes = b;
        }
    }

    /** Stops printing; waits briefly so that no live line interleaves with the summary that follows. */
    @Override
    public void close() {
        running = false;
        LockSupport.unpark(thread);
        try {
            thread.join(TimeUnit.SECONDS.toMillis(2));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
