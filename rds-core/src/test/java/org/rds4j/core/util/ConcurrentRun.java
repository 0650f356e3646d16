package org.rds4j.core.util;

/** Starts threads and waits for them all: the shape of the model-checked tests of the core's primitives. */
public final class ConcurrentRun {
    private ConcurrentRun() {
    }

    /**
     * Runs each part on a thread of its own and returns once all have ended; a part's failure (an assertion in it)
     * is rethrown here, so it fails the test. Under Lincheck's model checker the threads' steps interleave as it
     * chooses, and it reports a thread that never ends as a hang.
     *
     * @param parts what each thread does
     */
    public static void all(Runnable... parts) {
        Thread[] threads = new Thread[parts.length];
        Throwable[] failures = new Throwable[parts.length];
        for (int i = 0; i < parts.length; i++) {
            Runnable part = parts[i];
            int index = i;
            threads[i] = new Thread(() -> {
                try {
                    part.run();
                } catch (Throwable t) {
                    failures[index] = t;
                }
            });
            threads[i].start();
        }
        for (Thread t : threads) {
            try {
                t.join();
            } catch (InterruptedException e) {
                throw new AssertionError("nobody interrupts these threads", e);
            }
        }
        for (Throwable t : failures) {
            if (t instanceof RuntimeException r) {
                throw r;
            }
            if (t instanceof Error e) {
                throw e;
            }
            if (t != null) {
                throw new AssertionError(t);
            }
        }
    }
}
