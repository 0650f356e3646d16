package org.rds4j.core.path;

import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.junit.jupiter.api.Test;

/**
 * A poke's check, one at a time per connection ({@link DueCheck}, {@code PathPlacement}'s poke check), model-checked
 * by Lincheck: I/O threads marking two connections and checks ending must be linearizable to {@link Model}, one
 * plain field, in every interleaving explored. Two I/O threads marking the same connection at once schedule one
 * check, not two; a check that ends after another connection took over leaves that connection's mark.
 */
@Param(name = "connection", gen = IntGen.class, conf = "0:1")
public class DueCheckLincheckTest {
    private static final Integer[] CONNECTIONS = {0, 1};

    private final DueCheck<Integer> due = new DueCheck<>();

    @Operation
    public boolean mark(@Param(name = "connection") int c) {
        return due.mark(CONNECTIONS[c]);
    }

    @Operation
    public void done(@Param(name = "connection") int c) {
        due.done(CONNECTIONS[c]);
    }

    @Test
    void markAndDoneAreLinearizable() {
        new ModelCheckingOptions()
                .threads(3)
                .actorsPerThread(2)
                .actorsAfter(2)
                .iterations(20)
                .invocationsPerIteration(100)
                .sequentialSpecification(Model.class)
                .check(getClass());
    }

    /** One connection's check due at a time, with one thread. */
    public static final class Model {
        private Integer due;

        public boolean mark(int c) {
            boolean schedule = due != CONNECTIONS[c];
            due = CONNECTIONS[c];
            return schedule;
        }

        public void done(int c) {
            if (due == CONNECTIONS[c]) {
                due = null;
            }
        }
    }
}
