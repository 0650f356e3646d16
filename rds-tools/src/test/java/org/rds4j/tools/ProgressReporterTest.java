package org.rds4j.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The progress line of send, recv and echo: counts and rates, one a period, none with --quiet. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ProgressReporterTest {
    @Test
    void linesCarryTheCountsAndStopWhenClosed() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        PrintStream err = new PrintStream(bytes, true, StandardCharsets.UTF_8);
        AtomicLong messages = new AtomicLong(1234);
        ProgressReporter r = new ProgressReporter(err, "send", messages::get, () -> messages.get() * 100, 5000,
                TimeUnit.MILLISECONDS.toNanos(20));
        r.startThread();
        try {
            awaitLines(bytes, 2);
        } finally {
            r.close();
        }
        String text = bytes.toString(StandardCharsets.UTF_8);
        String first = text.lines().findFirst().orElseThrow();
        assertTrue(first.matches("send: \\[\\d+\\.\\d\\d s] 1234 of 5000 messages, 123400 bytes; last second 0 msg/s,"
                + " 0\\.00 MB/s"), first);
        // closed: the thread has ended, so no line can follow the tool's summary
        assertFalse(r.alive());
    }

    @Test
    void aLineGivesTheRateOfItsInterval() {
        ProgressReporter r = new ProgressReporter(new PrintStream(new ByteArrayOutputStream()), "echo", () -> 0,
                () -> 0, -1, TimeUnit.SECONDS.toNanos(1));
        assertEquals("echo: [3.00 s] 9000 messages, 900000 bytes; last second 2000 msg/s, 0.20 MB/s",
                r.line(TimeUnit.SECONDS.toNanos(3), 9000, 900_000, TimeUnit.MILLISECONDS.toNanos(500), 1000,
                        100_000));
    }

    @Test
    void quietPrintsNothing() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        ProgressReporter r = ProgressReporter.start(true, new PrintStream(bytes, true, StandardCharsets.UTF_8),
                "recv", () -> 1, () -> 1, 10);
        assertFalse(r.alive(), "no thread started");
        r.close();
        assertEquals("", bytes.toString(StandardCharsets.UTF_8));
    }

    private static void awaitLines(ByteArrayOutputStream bytes, int n) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (bytes.toString(StandardCharsets.UTF_8).lines().count() < n) {
            if (System.nanoTime() > deadline) {
                fail("fewer than " + n + " progress lines in 30 s: " + bytes.toString(StandardCharsets.UTF_8));
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
        }
    }
}
