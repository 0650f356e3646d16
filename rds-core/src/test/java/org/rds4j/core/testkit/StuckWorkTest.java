package org.rds4j.core.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

class StuckWorkTest {
    @Test
    void aFinishedWorkerGivesItsResult() throws Exception {
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            assertEquals(42, StuckWork.await(pool.submit(() -> 42), 10, "answer"));
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void aFailedWorkerGivesItsFailure() {
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            Future<Object> f = pool.submit(() -> {
                throw new IllegalStateException("broken");
            });
            ExecutionException e = assertThrows(ExecutionException.class, () -> StuckWork.await(f, 10, "failing"));
            assertEquals("broken", e.getCause().getMessage());
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void aStuckWorkerFailsAndTheReportShowsWhereItWaits() throws Exception {
        CountDownLatch never = new CountDownLatch(1);
        ExecutorService pool = Executors.newSingleThreadExecutor(r -> new Thread(r, "stuck-worker"));
        try {
            Future<Object> f = pool.submit(() -> {
                never.await();
                return null;
            });
            AssertionError e = assertThrows(AssertionError.class, () -> StuckWork.await(f, 1, "waiting worker"));
            assertTrue(e.getMessage().startsWith("waiting worker did not finish within 1 s"), e.getMessage());
            String report = StuckWork.report("waiting worker", 1);
            assertTrue(report.contains("\"stuck-worker\" WAITING"), report);
            assertTrue(report.contains("CountDownLatch.await"), report);
        } finally {
            pool.shutdownNow();
        }
    }
}
