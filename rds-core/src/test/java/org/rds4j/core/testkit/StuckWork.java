package org.rds4j.core.testkit;

import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.rds4j.RdsStack;

/**
 * Waits for a test's worker thread with a bound, and when the bound runs out leaves what is needed to find out why:
 * a deadlock or a lost wake-up in the stack shows only as a worker that never returns, and once the test has failed
 * and the stacks are closed nothing of it is left. So before failing this prints every thread's stack and each host's
 * {@link RdsStack#info()} (paths, queues, congestion maps, counters) on stderr, where the surefire report keeps it.
 */
public final class StuckWork {
    private StuckWork() {
    }

    /**
     * The worker's result, waiting at most {@code seconds}.
     *
     * @param work the worker
     * @param seconds the longest wait
     * @param what what the worker does, for the failure message
     * @param hosts the stacks whose state to print if it is stuck
     * @return the worker's result
     * @throws AssertionError if the worker did not finish in time (after printing the threads and hosts)
     * @throws ExecutionException if the worker failed: its failure is the cause
     */
    public static <T> T await(Future<T> work, long seconds, String what, RdsStack... hosts)
            throws ExecutionException, InterruptedException {
        try {
            return work.get(seconds, TimeUnit.SECONDS);
        } catch (TimeoutException e) {
            System.err.println(report(what, seconds, hosts));
            throw new AssertionError(what + " did not finish within " + seconds + " s; every thread's stack and"
                    + " each host's state at that moment are on stderr", e);
        }
    }

    /** Every live thread's full stack, then each host's snapshot. */
    static String report(String what, long seconds, RdsStack... hosts) {
        StringBuilder sb = new StringBuilder();
        sb.append("---- ").append(what).append(": still running after ").append(seconds).append(" s ----\n");
        for (Map.Entry<Thread, StackTraceElement[]> t : Thread.getAllStackTraces().entrySet()) {
            Thread thread = t.getKey();
            sb.append('"').append(thread.getName()).append("\" ").append(thread.getState()).append('\n');
            for (StackTraceElement frame : t.getValue()) {
                sb.append("    at ").append(frame).append('\n');
            }
        }
        for (RdsStack host : hosts) {
            try {
                sb.append("---- ").append(host).append(" ----\n").append(host.info()).append('\n');
            } catch (RuntimeException e) {
                sb.append("---- ").append(host).append(": no snapshot (").append(e).append(") ----\n");
            }
        }
        return sb.toString();
    }
}
