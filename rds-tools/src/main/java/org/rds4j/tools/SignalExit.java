package org.rds4j.tools;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.IntSupplier;

/**
 * Lets a tool that runs until killed (echo, ping) print its summary on SIGINT or SIGTERM and exit with a status
 * of its choosing, instead of the JVM's 130/143. Exactly one of the two paths wins: the signal's shutdown hook, or
 * the tool finishing normally through {@link #finish()}.
 */
final class SignalExit {
    private final AtomicBoolean done = new AtomicBoolean();
    private final Thread hook;

    /**
     * @param onSignal closes the tool's sockets and stack and prints the summary
     * @param status the exit status after a signal
     */
    SignalExit(Runnable onSignal, IntSupplier status) {
        this.hook = new Thread(() -> {
            if (done.compareAndSet(false, true)) {
                int code = 1;
                try {
                    onSignal.run();
                    code = status.getAsInt();
                } finally {
                    System.out.flush();
                    System.err.flush();
                    // exit() would wait for this very hook; halt() ends the JVM with our status now.
                    Runtime.getRuntime().halt(code);
                }
            }
        }, "rds4j-signal-exit");
        Runtime.getRuntime().addShutdownHook(hook);
    }

    /**
     * Claims the normal exit path.
     *
     * @return false if a signal already claimed it: the hook prints the summary and ends the JVM, so the caller
     *         must print nothing more
     */
    boolean finish() {
        if (!done.compareAndSet(false, true)) {
            return false;
        }
        try {
            Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException shuttingDown) {
            // The JVM is already exiting for another reason; the hook will find done set and do nothing.
        }
        return true;
    }

    /** Whether a signal (or a normal finish) has claimed the exit. */
    boolean isDone() {
        return done.get();
    }
}
