package org.rds4j.core.util;

import java.util.LinkedHashSet;
import java.util.Set;
import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.junit.jupiter.api.Test;

/**
 * {@link SnapshotSet}, model-checked by Lincheck: members join and leave under its lock while other threads walk the
 * array without one, and every interleaving explored must be linearizable to a plain set ({@link Model}). A walk
 * that saw an array half built, or a change lost between two writers, would show as a member missing or counted
 * twice.
 */
@Param(name = "member", gen = IntGen.class, conf = "0:2")
public class SnapshotSetLincheckTest {
    private static final Integer[] MEMBERS = {0, 1, 2};

    private final SnapshotSet<Integer> set = new SnapshotSet<>(Integer[]::new);

    @Operation
    public boolean add(@Param(name = "member") int m) {
        return set.add(MEMBERS[m]);
    }

    @Operation
    public boolean remove(@Param(name = "member") int m) {
        return set.remove(MEMBERS[m]);
    }

    /** A walk without the lock, as a congestion update walks the stack's connections: the members, as a number. */
    @Operation
    public int walk() {
        int bits = 0;
        for (Integer m : set.members()) {
            bits |= 1 << m;
        }
        return bits;
    }

    @Test
    void walksSeeWholeChanges() {
        new ModelCheckingOptions()
                .threads(3)
                .actorsPerThread(2)
                .iterations(5)
                .invocationsPerIteration(100)
                .sequentialSpecification(Model.class)
                .check(getClass());
    }

    /** The same set with nobody else about. */
    public static final class Model {
        private final Set<Integer> members = new LinkedHashSet<>();

        public boolean add(int m) {
            return members.add(m);
        }

        public boolean remove(int m) {
            return members.remove(m);
        }

        public int walk() {
            int bits = 0;
            for (int m : members) {
                bits |= 1 << m;
            }
            return bits;
        }
    }
}
