package org.rds4j.bench;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class FinalizerThreadTest {

    /** An object whose finalizer waits for the test: the finalizer thread is busy until it lets go. */
    private static final class HeldFinalizer {
        private final CountDownLatch started;
        private final CountDownLatch release;

        HeldFinalizer(CountDownLatch started, CountDownLatch release) {
            this.started = started;
            this.release = release;
        }

        @Override
        @SuppressWarnings({"deprecation", "java:S1113"})     // a finalizer is what this test needs
        protected void finalize() throws InterruptedException {
            started.countDown();
            release.await(30, TimeUnit.SECONDS);
        }
    }

    @Test
    @SuppressWarnings("java:S1215")     // collections make the finalizer due
    void awaitIdleWaitsForARunningFinalizerAndNotForAnEmptyQueue() throws InterruptedException {
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        try {
            makeGarbage(started, release);
            for (int i = 0; i < 50 && !started.await(100, TimeUnit.MILLISECONDS); i++) {
                System.gc();
            }
            assertTrue(started.getCount() == 0, "the finalizer never ran");
            assertFalse(FinalizerThread.awaitIdle(TimeUnit.MILLISECONDS.toNanos(50)),
                    "idle while a finalizer runs");
        } finally {
            release.countDown();
        }
        assertTrue(FinalizerThread.awaitIdle(TimeUnit.SECONDS.toNanos(10)), "still busy after the finalizer ended");
    }

    private static void makeGarbage(CountDownLatch started, CountDownLatch release) {
        new HeldFinalizer(started, release).hashCode();
    }
}
