package org.rds4j.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.IntFunction;

/**
 * Runs one phase of a cell: for each endpoint pair of the link, a task for side B (started first, so that it is
 * already receiving) and one for side A, on the cell's long-lived workers (one per side and pair), and waits for all
 * of them within a deadline.
 *
 * <p>The first failure of any task ends the phase at once: the link is closed, which makes the other tasks' blocked
 * calls return, and the failure is reported. A phase that outlives its deadline is ended the same way. So a lost
 * message costs at most the deadline, never a hung benchmark.
 */
final class PhaseRunner {
    private final Link link;
    private final List<Worker> a;
    private final List<Worker> b;

    /** {@code a} and {@code b} hold one worker per endpoint pair of {@code link}. */
    PhaseRunner(Link link, List<Worker> a, List<Worker> b) {
        if (a.size() != link.pairs() || b.size() != link.pairs()) {
            throw new IllegalArgumentException("one worker per side and pair: " + link.pairs() + " pair(s), "
                    + a.size() + " and " + b.size() + " workers");
        }
        this.link = link;
        this.a = a;
        this.b = b;
    }

    /** Runs both tasks of every pair; returns A's results, by pair. */
    <T> List<T> run(String phase, IntFunction<Callable<?>> sideB, IntFunction<Callable<T>> sideA, long timeoutNanos)
            throws CellFailure {
        List<CompletableFuture<?>> all = new ArrayList<>();
        for (int p = 0; p < b.size(); p++) {
            all.add(start(b.get(p), sideB.apply(p)));
        }
        List<CompletableFuture<T>> doneA = new ArrayList<>();
        for (int p = 0; p < a.size(); p++) {
            CompletableFuture<T> f = start(a.get(p), sideA.apply(p));
            doneA.add(f);
            all.add(f);
        }
        CompletableFuture<Void> every = CompletableFuture.allOf(all.toArray(CompletableFuture[]::new));
        // Completes with the first failure of any task, without waiting for the others.
        CompletableFuture<Object> firstFailure = new CompletableFuture<>();
        for (CompletableFuture<?> f : all) {
            f.whenComplete((r, t) -> failIf(firstFailure, t));
        }
        try {
            CompletableFuture.anyOf(every, firstFailure).get(timeoutNanos, TimeUnit.NANOSECONDS);
            List<T> results = new ArrayList<>();
            for (CompletableFuture<T> f : doneA) {
                results.add(f.get());
            }
            return results;
        } catch (ExecutionException e) {
            abort(every);
            throw new CellFailure(phase + " failed", e.getCause());
        } catch (TimeoutException e) {
            abort(every);
            throw new CellFailure(phase + " did not finish within " + TimeUnit.NANOSECONDS.toSeconds(timeoutNanos)
                    + " s (a message lost, or the contender stalled)", null);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            abort(every);
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

    /** Closes the link so that a task still blocked returns, and waits a bounded while for all to settle. */
    private void abort(CompletableFuture<Void> every) {
        link.close();
        try {
            every.get(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException expected) {
            // The tasks that did not fail first usually fail now, on the closed link; the first failure is reported.
        }
    }
}
