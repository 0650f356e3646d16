package org.rds4j.bench;

import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Runs one phase of a cell: a task for side B (started first, so that it is already receiving) and one for side A, on
 * the cell's two long-lived workers, and waits for both within a deadline.
 *
 * <p>The first failure of either side ends the phase at once: the link is closed, which makes the other side's
 * blocked call return, and the failure is reported. A phase that outlives its deadline is ended the same way. So a
 * lost message costs at most the deadline, never a hung benchmark.
 */
final class PhaseRunner {
    private final Link link;
    private final Worker a;
    private final Worker b;

    PhaseRunner(Link link, Worker a, Worker b) {
        this.link = link;
        this.a = a;
        this.b = b;
    }

    /** Runs both tasks; returns A's result. */
    <T> T run(String phase, Callable<?> sideB, Callable<T> sideA, long timeoutNanos) throws CellFailure {
        CompletableFuture<?> doneB = start(b, sideB);
        CompletableFuture<T> doneA = start(a, sideA);
        CompletableFuture<Void> both = CompletableFuture.allOf(doneA, doneB);
        // Completes with the first failure of either side, without waiting for the other.
        CompletableFuture<Object> firstFailure = new CompletableFuture<>();
        doneA.whenComplete((r, t) -> failIf(firstFailure, t));
        doneB.whenComplete((r, t) -> failIf(firstFailure, t));
        try {
            CompletableFuture.anyOf(both, firstFailure).get(timeoutNanos, TimeUnit.NANOSECONDS);
            return doneA.get();
        } catch (ExecutionException e) {
            abort(both);
            throw new CellFailure(phase + " failed", e.getCause());
        } catch (TimeoutException e) {
            abort(both);
            throw new CellFailure(phase + " did not finish within " + TimeUnit.NANOSECONDS.toSeconds(timeoutNanos)
                    + " s (a message lost, or the contender stalled)", null);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            abort(both);
            throw new CellFailure(phase + " interrupted", e);
        }
    }

    private static <T> CompletableFuture<T> start(Worker w, Callable<T> task) {
        CompletableFuture<T> f = new CompletableFuture<>();
        w.submit(() -> {
            try {
                f.complete(task.call());
            } catch (Throwable t) {
                f.completeExceptionally(t);
            }
            return null;
        });
        return f;
    }

    private static void failIf(CompletableFuture<Object> firstFailure, Throwable t) {
        if (t != null) {
            firstFailure.completeExceptionally(t);
        }
    }

    /** Closes the link so that a side still blocked returns, and waits a bounded while for both to settle. */
    private void abort(CompletableFuture<Void> both) {
        link.close();
        try {
            both.get(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException expected) {
            // The side that did not fail first usually fails now, on the closed link; the first failure is reported.
        }
    }
}
