package org.rds4j.core.stack;

import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.junit.jupiter.api.Test;
import org.rds4j.core.stack.RdsCounters.Counter;

/**
 * {@link RdsCounters}, bumped by senders, I/O threads and readers at once, model-checked by Lincheck: increments, adds
 * and reads of two counters must be linearizable to {@link Model}, two plain longs, in every interleaving explored.
 */
@Param(name = "counter", gen = IntGen.class, conf = "0:1")
@Param(name = "n", gen = IntGen.class, conf = "1:3")
public class RdsCountersLincheckTest {
    private static final Counter[] COUNTERS = {Counter.SEND_QUEUED, Counter.ACK_SENT};

    private final RdsCounters counters = new RdsCounters();

    @Operation
    public void increment(@Param(name = "counter") int c) {
        counters.increment(COUNTERS[c]);
    }

    @Operation
    public void add(@Param(name = "counter") int c, @Param(name = "n") int n) {
        counters.add(COUNTERS[c], n);
    }

    @Operation
    public long get(@Param(name = "counter") int c) {
        return counters.get(COUNTERS[c]);
    }

    @Test
    void countersAreLinearizable() {
        new ModelCheckingOptions()
                .threads(3)
                .actorsPerThread(2)
                .iterations(5)
                .invocationsPerIteration(100)
                .sequentialSpecification(Model.class)
                .check(getClass());
    }

    /** Two counters with one thread. */
    public static final class Model {
        private final long[] values = new long[COUNTERS.length];

        public void increment(int c) {
            values[c]++;
        }

        public void add(int c, int n) {
            values[c] += n;
        }

        public long get(int c) {
            return values[c];
        }
    }
}
