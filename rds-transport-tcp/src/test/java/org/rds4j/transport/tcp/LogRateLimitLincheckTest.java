package org.rds4j.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.jetbrains.lincheck.Lincheck;
import org.junit.jupiter.api.Test;

/**
 * The TLS refusals' rate limit on their log line ({@link LogRateLimit}), model-checked by Lincheck at every shared
 * read, write and compare-and-set: three threads report twice each, once in the first interval and once in the
 * next. In every interleaving no two lines are logged within one interval, and the counts add up: every report is
 * a line, is carried by a line's count, or is still held back for the next line.
 */
class LogRateLimitLincheckTest {
    private static final int INVOCATIONS = 200;
    private static final long INTERVAL = 10;
    private static final int THREADS = 3;
    private static final long[] CLOCK = {0, INTERVAL};

    @Test
    void oneLinePerIntervalAndTheCountsAddUp() {
        Lincheck.runConcurrentTest(INVOCATIONS, () -> {
            LogRateLimit limit = new LogRateLimit(INTERVAL);
            long[][] logged = new long[THREADS][CLOCK.length];     // held back carried, or HELD_BACK; one slot each
            Thread[] threads = new Thread[THREADS];
            for (int t = 0; t < THREADS; t++) {
                int me = t;
                threads[t] = new Thread(() -> {
                    for (int i = 0; i < CLOCK.length; i++) {
                        logged[me][i] = limit.admit(CLOCK[i]);
                    }
                });
                threads[t].start();
            }
            try {
                for (Thread t : threads) {
                    t.join();
                }
            } catch (InterruptedException e) {
                throw new AssertionError("nobody interrupts these threads", e);
            }
            long lines = 0;
            long carried = 0;
            long[] linesAt = new long[CLOCK.length];
            for (long[] mine : logged) {
                for (int i = 0; i < CLOCK.length; i++) {
                    if (mine[i] != LogRateLimit.HELD_BACK) {
                        lines++;
                        carried += mine[i];
                        linesAt[i]++;
                    }
                }
            }
            for (int i = 0; i < CLOCK.length; i++) {
                assertTrue(linesAt[i] <= 1, "two lines logged within one interval");
            }
            assertTrue(lines >= 1, "no line at all");
            assertEquals(THREADS * CLOCK.length, lines + carried + limit.heldBack(),
                    "reports lost or counted twice (lines + carried counts + held back)");
        });
    }
}
