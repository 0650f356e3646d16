package org.rds4j.tools;

import java.io.PrintStream;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongSupplier;

/**
 * Progress of a long {@code send}, {@code recv} or {@code echo}: once a second, on stderr so that stdout stays the
 * tool's result, one line with the counts so far and the rates of the last second. A run shorter than a second
 * prints none. It runs on its own daemon thread and only reads counters the worker updates, so the worker never
 * formats or prints anything per message. {@code --quiet} turns it off.
 */
final class ProgressReporter implements AutoCloseable {
    /** Options every tool with progress takes. */
    static final String USAGE = "  --quiet          no progress line on stderr (by default one a second)\n";

    private final PrintStream err;
    private final String tool;
    private final LongSupplier messages;
    private final LongSupplier bytes;
    private final long total;
    private final long periodNanos;
    private final Thread thread;
    private volatile boolean running = true;

    /**
     * @param total the messages the run aims at, or -1 for a run without end (echo)
     * @param periodNanos time between lines: a second, shorter only in tests
     */
    ProgressReporter(PrintStream err, String tool, LongSupplier messages, LongSupplier bytes, long total,
                     long periodNanos) {
        this.err = err;
        this.tool = tool;
        this.messages = messages;
        this.bytes = bytes;
        this.total = total;
        this.periodNanos = periodNanos;
        this.thread = new Thread(this::run, "rds4j-" + tool + "-progress");
        this.thread.setDaemon(true);
    }

    /** Starts reporting unless {@code quiet}; either way the caller closes it. */
    static ProgressReporter start(boolean quiet, PrintStream err, String tool, LongSupplier messages,
                                  LongSupplier bytes, long total) {
        ProgressReporter r = new ProgressReporter(err, tool, messages, bytes, total, TimeUnit.SECONDS.toNanos(1));
        if (!quiet) {
            r.thread.start();
        }
        return r;
    }

    /** Starts the thread of a reporter made with its constructor (tests, with a short period). */
    void startThread() {
        thread.start();
    }

    boolean alive() {
        return thread.isAlive();
    }

    private void run() {
        long start = System.nanoTime();
        long lastTime = start;
        long lastMessages = messages.getAsLong();
        long lastBytes = bytes.getAsLong();
        // Ticks are counted from the start, not from the previous line, so lines do not drift.
        for (long tick = 1; running; tick++) {
            long due = start + tick * periodNanos;
            for (long wait; running && (wait = due - System.nanoTime()) > 0; ) {
                LockSupport.parkNanos(this, wait);
            }
            if (!running) {
                return;
            }
            long now = System.nanoTime();
            long m = messages.getAsLong();
            long b = bytes.getAsLong();
            err.println(line(now - start, m, b, now - lastTime, m - lastMessages, b - lastBytes));
            err.flush();
            lastTime = now;
            lastMessages = m;
            lastBytes = b;
        }
    }

    String line(long elapsed, long m, long b, long interval, long intervalMessages, long intervalBytes) {
        return String.format(Locale.ROOT, "%s: [%s] %d%s messages, %d bytes; last second %d msg/s, %s",
                tool, Format.seconds(elapsed), m, total >= 0 ? " of " + total : "", b,
                Format.perSecond(intervalMessages, interval), Format.megabytesPerSecond(intervalBytes, interval));
    }

    /** Stops; waits briefly so that no progress line interleaves with the summary that follows. */
    @Override
    public void close() {
        running = false;
        LockSupport.unpark(thread);
        if (thread.isAlive()) {
            try {
                thread.join(TimeUnit.SECONDS.toMillis(2));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
