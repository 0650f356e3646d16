package org.rds4j.core.util;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;

/**
 * {@link SnapshotSet}: the members in the order they joined, each once, by identity; a walk sees the set as it was
 * when the walk began, whatever joins or leaves meanwhile.
 */
class SnapshotSetTest {
    /** Distinct objects that are equal to each other: the set must tell them apart. */
    private static final class Member {
        @Override
        public boolean equals(Object o) {
            return o instanceof Member;
        }

        @Override
        public int hashCode() {
            return 1;
        }
    }

    @Property(tries = 200)
    void behavesAsAListOfDistinctObjects(@ForAll @Size(max = 200) List<@IntRange(min = 0, max = 15) Integer> ops) {
        Member[] pool = new Member[8];
        for (int i = 0; i < pool.length; i++) {
            pool[i] = new Member();
        }
        SnapshotSet<Member> set = new SnapshotSet<>(Member[]::new);
        List<Member> model = new ArrayList<>();
        for (int op : ops) {
            Member m = pool[op % 8];
            boolean inModel = model.stream().anyMatch(x -> x == m);
            if (op < 8) {
                assertEquals(!inModel, set.add(m), "add");
                if (!inModel) {
                    model.add(m);
                }
            } else {
                assertEquals(inModel, set.remove(m), "remove");
                model.removeIf(x -> x == m);
            }
            Member[] members = set.members();
            assertEquals(model.size(), members.length);
            for (int i = 0; i < members.length; i++) {
                assertSame(model.get(i), members[i], "member " + i);
            }
        }
    }

    @Example
    void aWalkSeesTheSetAsItWasWhenItBegan() {
        SnapshotSet<String> set = new SnapshotSet<>(String[]::new);
        set.add("a");
        set.add("b");
        String[] walk = set.members();
        set.add("c");
        set.remove("a");
        assertArrayEquals(new String[] {"a", "b"}, walk);
        assertArrayEquals(new String[] {"b", "c"}, set.members());
        assertTrue(set.remove("b"));
        assertFalse(set.remove("b"));
    }
}
