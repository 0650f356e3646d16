package org.rds4j.core.util;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.jetbrains.lincheck.Lincheck;
import org.junit.jupiter.api.Test;

/**
 * {@link BoundedPool} and {@link GrowingPool} under Lincheck's model checker: givers and takers interleaved at every
 * shared read and write. The pool is not linearizable by design (a take may find it empty while an earlier give is
 * still between its two steps, which costs one allocation), so the tests check what the sockets and the loopback
 * transport rely on instead: an object given back comes out at most once, nothing comes out that was not given, the
 * bounded pool loses nothing below its capacity and hands one giver's objects out in the order they went in, and a
 * growing pool grown by its one giver while another thread takes moves all it held into the grown pool. (With several
 * givers a growth may leave objects behind, as {@link GrowingPool} says: they cost an allocation, never a second
 * owner.)
 */
class BoundedPoolLincheckTest {
    private static final int INVOCATIONS = 50;

    // The objects given, made once: identity is what counts, and each run starts with an empty pool. Failure messages
    // are built only on failure: string building under the model checker costs more than the pool's steps.
    private static final List<String> A2 = items("a", 2);
    private static final List<String> B2 = items("b", 2);
    private static final List<String> A5 = items("a", 5);

    /** A giver's objects: names say whose and in which order ("a1" before "a2"). */
    private static List<String> items(String giver, int n) {
        List<String> l = new ArrayList<>();
        for (int i = 1; i <= n; i++) {
            l.add(new String(giver + i));              // identity matters: no two givers share an object
        }
        return l;
    }

    @Test
    void boundedPoolLosesNothingAndHandsOutEachObjectOnce() {
        Lincheck.runConcurrentTest(2 * INVOCATIONS, () -> {
            BoundedPool<String> pool = new BoundedPool<>(4, () -> null);
            List<String> a = A2;
            List<String> b = B2;
            List<String> takenByA = new ArrayList<>();
            List<String> takenByB = new ArrayList<>();
            List<String> takenByC = new ArrayList<>();
            ConcurrentRun.all(
                    () -> {
                        assertTrue(pool.offer(a.get(0)));
                        addIfAny(takenByA, pool.poll());
                        assertTrue(pool.offer(a.get(1)));
                    },
                    () -> {
                        assertTrue(pool.offer(b.get(0)));
                        assertTrue(pool.offer(b.get(1)));
                        addIfAny(takenByB, pool.poll());
                    },
                    () -> {
                        addIfAny(takenByC, pool.poll());
                        addIfAny(takenByC, pool.poll());
                    });
            List<String> drained = new ArrayList<>();
            for (String s; (s = pool.poll()) != null; ) {
                drained.add(s);
            }
            List<String> all = new ArrayList<>();
            all.addAll(takenByA);
            all.addAll(takenByB);
            all.addAll(takenByC);
            all.addAll(drained);
            List<String> given = new ArrayList<>(a);
            given.addAll(b);
            assertSameObjectsOnce(given, all);
            for (List<String> seq : List.of(takenByA, takenByB, takenByC, drained)) {
                assertGiversOrderKept(seq);
            }
        });
    }

    @Test
    void growingPoolKeepsWhatItHeldWhenItsOneGiverGrowsIt() {
        Lincheck.runConcurrentTest(INVOCATIONS, () -> {
            GrowingPool<String> pool = new GrowingPool<>(4, 16, () -> null);
            List<String> a = A5;
            List<String> taken = new ArrayList<>();
            ConcurrentRun.all(
                    () -> a.forEach(s -> assertTrue(pool.offer(s), () -> "dropped below the most capacity")),
                    () -> {
                        addIfAny(taken, pool.take());
                        addIfAny(taken, pool.take());
                    });
            List<String> drained = new ArrayList<>();
            for (int i = 0; i < a.size(); i++) {
                addIfAny(drained, pool.take());
            }
            List<String> all = new ArrayList<>(taken);
            all.addAll(drained);
            assertSameObjectsOnce(a, all);
            assertGiversOrderKept(taken);
        });
    }

    private static void addIfAny(List<String> l, String s) {
        if (s != null) {
            l.add(s);
        }
    }

    private static int indexOfSame(List<String> l, String s) {
        for (int i = 0; i < l.size(); i++) {
            if (l.get(i) == s) {
                return i;
            }
        }
        return -1;
    }

    /** {@code out} holds exactly the objects of {@code given}, each once (by identity). */
    private static void assertSameObjectsOnce(List<String> given, List<String> out) {
        assertEquals(given.size(), out.size(), () -> "given " + given + ", out " + out);
        List<String> left = new ArrayList<>(given);
        for (String s : out) {
            assertNotNull(s);
            int at = indexOfSame(left, s);
            assertTrue(at >= 0, () -> s + " came out twice, or was never given: out " + out);
            left.set(at, null);
        }
    }

    /** One giver's objects appear in {@code seq} in the order it gave them. */
    private static void assertGiversOrderKept(List<String> seq) {
        for (int i = 0; i < seq.size(); i++) {
            for (int j = i + 1; j < seq.size(); j++) {
                String x = seq.get(i);
                String y = seq.get(j);
                if (x.charAt(0) == y.charAt(0)) {
                    assertTrue(x.compareTo(y) < 0, () -> "out of order: " + seq);
                }
            }
        }
    }
}
