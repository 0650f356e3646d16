package org.rds4j.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class WarmupTest {
    private static final long SECOND = TimeUnit.SECONDS.toNanos(1);
    private static final long QUIET = SECOND / 20;      // 5 % of a core over a second
    private static final long BUSY = SECOND / 5;        // 20 %

    private static Warmup warmup(long minNanos) {
        return new Warmup(minNanos, () -> -1, () -> -1);
    }

    @Test
    void neverEndsBeforeTheMinimumEvenWhenQuiet() {
        Warmup w = warmup(2 * SECOND);
        assertFalse(w.ends(SECOND, 0, SECOND));
        assertFalse(w.ends(2 * SECOND - 1, 0, SECOND));
        assertTrue(w.ends(2 * SECOND, QUIET, SECOND));
    }

    @Test
    void goesOnWhileTheJvmsOwnThreadsAreBusyUpToTenTimesTheMinimum() {
        Warmup w = warmup(SECOND);
        assertEquals(10 * SECOND, w.maxNanos());
        assertFalse(w.ends(SECOND, BUSY, SECOND));
        assertFalse(w.ends(9 * SECOND, BUSY, SECOND));
        assertTrue(w.ends(10 * SECOND, BUSY, SECOND), "bounded");
        assertTrue(w.ends(3 * SECOND, QUIET, SECOND));
    }

    @Test
    void aTenthOfACoreIsBusy() {
        Warmup w = warmup(SECOND);
        long look = SECOND / 2;
        assertTrue(w.ends(SECOND, (long) (Warmup.QUIET_SHARE * look) - 1, look));
        assertFalse(w.ends(SECOND, (long) (Warmup.QUIET_SHARE * look), look));
    }

    @Test
    void whatTheJvmCannotTellEndsItAtTheMinimum() {
        Warmup w = warmup(SECOND);
        assertFalse(w.ends(SECOND / 2, -1, SECOND));
        assertTrue(w.ends(SECOND, -1, SECOND));
        assertEquals(-1, w.backgroundCpuNanos());
        assertEquals(-1, new Warmup(SECOND, () -> 5, () -> -1).backgroundCpuNanos());
        assertEquals(-1, new Warmup(SECOND, () -> -1, () -> 5).backgroundCpuNanos());
    }

    @Test
    void theJvmsOwnThreadsAreWhatTheProcessSpentBeyondItsJavaThreads() {
        AtomicLong process = new AtomicLong(900);
        AtomicLong javaThreads = new AtomicLong(700);
        Warmup w = new Warmup(SECOND, process::get, javaThreads::get);
        assertEquals(200, w.backgroundCpuNanos());
        process.addAndGet(500);           // a Java thread's 400 and the compiler's 100
        javaThreads.addAndGet(400);
        assertEquals(300, w.backgroundCpuNanos());
    }

    @Test
    void theMaximumDoesNotOverflow() {
        assertEquals(Long.MAX_VALUE, warmup(Long.MAX_VALUE / 2).maxNanos());
    }

    @Test
    void thisJvmsCountersAreReadAsTheProcessAndItsJavaThreads() {
        Warmup w = Warmup.ofThisJvm(SECOND);
        long background = w.backgroundCpuNanos();
        long process = ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
                .getProcessCpuTime();
        // The JVM's own threads took part of the process's time, never more than all of it, and never less than none.
        assertTrue(background >= 0 && background <= process, background + " of " + process);
    }
}
