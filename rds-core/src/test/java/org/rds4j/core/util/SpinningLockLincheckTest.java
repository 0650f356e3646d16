package org.rds4j.core.util;

import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.junit.jupiter.api.Test;

/**
 * {@link SpinningLock}'s mutual exclusion, model-checked by Lincheck: a counter read and written in two steps under the
 * lock taken by {@link SpinningLock#lock} (which tries, spins and only then queues) must be linearizable to a plain
 * counter ({@link Model}) in every interleaving explored. Two holders at once would lose an increment or read one
 * twice.
 */
public class SpinningLockLincheckTest {
    private final SpinningLock lock = new SpinningLock();
    private int count;

    /** Takes the lock, reads and bumps the counter; returns what it read. */
    @Operation
    public int increment() {
        lock.lock();
        try {
            int c = count;
            count = c + 1;
            return c;
        } finally {
            lock.unlock();
        }
    }

    @Test
    void holdersExcludeEachOther() {
        new ModelCheckingOptions()
                .threads(3)
                .actorsPerThread(2)
                .iterations(5)
                .invocationsPerIteration(100)
                .sequentialSpecification(Model.class)
                .check(getClass());
    }

    /** A counter with nobody else about. */
    public static final class Model {
        private int count;

        public int increment() {
            return count++;
        }
    }
}
