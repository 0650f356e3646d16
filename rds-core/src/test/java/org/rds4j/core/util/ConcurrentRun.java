package org.rds4j.core.util;

/** Starts threads and waits for them all: the shape of the model-checked tests of this package's primitives. */
final class ConcurrentRun {
    private ConcurrentRun() {
    }

    /**
     * Runs each part on a thread of its own and returns once all have ended. Under Lincheck's model checker the
     * threads' steps interleave as it chooses; it reports a thread that never ends as a hang.
     *
     * @param parts what each thread does
     */
    static void all(Runnable... parts) {
        Thread[] threads = new Thread[parts.length];
        for (int i = 0; i < parts.length; i++) {
            threads[i] = new Thread(parts[i]);
            threads[i].start();
        }
        for (Thread t : threads) {
            try {
                t.join();
            } catch (InterruptedException e) {
                throw new AssertionError("nobody interrupts these threads", e);
            }
        }
    }
}
