package org.rds4j.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;

class SequenceCheckerTest {

    private static ByteBuffer message(long k, int size) {
        ByteBuffer b = ByteBuffer.allocate(size);
        PayloadPattern.fill(b, k, size);
        return b.flip();
    }

    private static SequenceChecker feed(List<Long> sequence, int size) {
        SequenceChecker c = new SequenceChecker();
        for (long k : sequence) {
            c.accept(message(k, size));
        }
        return c;
    }

    private static List<Long> upTo(long n) {
        List<Long> l = new ArrayList<>();
        for (long k = 0; k < n; k++) {
            l.add(k);
        }
        return l;
    }

    @Property
    void anInOrderStreamHasNoProblemsAtAnySize(@ForAll @IntRange(min = 0, max = 700) int n,
            @ForAll @IntRange(min = 0, max = 20) int size) {
        SequenceChecker c = feed(upTo(n), size);
        assertEquals(0, c.problems());
        assertEquals(n, c.received());
        assertEquals(n, c.expected());
    }

    @Property
    void droppedMessagesAreCountedLost(@ForAll @Size(max = 30) Set<@IntRange(min = 0, max = 599) Integer> dropped,
            @ForAll @IntRange(min = 1, max = 20) int size) {
        List<Long> stream = upTo(600);
        stream.removeIf(k -> dropped.contains(k.intValue()));
        // Keep the last message, so that every drop is a gap the checker can see.
        if (dropped.contains(599)) {
            stream.add(599L);
        }
        SequenceChecker c = feed(stream, size);
        long expectedLost = dropped.stream().filter(k -> k != 599).count();
        assertEquals(expectedLost, c.lost());
        assertEquals(0, c.duplicates() + c.reordered() + c.corrupt());
    }

    @Test
    void aSwapIsOneReorderAndNoLoss() {
        SequenceChecker c = feed(List.of(0L, 1L, 3L, 2L, 4L), 64);
        assertEquals(1, c.reordered());
        assertEquals(0, c.lost());
        assertEquals(0, c.duplicates());
    }

    @Test
    void aRepeatIsADuplicate() {
        SequenceChecker c = feed(List.of(0L, 1L, 2L, 2L, 3L, 1L), 64);
        assertEquals(2, c.duplicates());
        assertEquals(0, c.lost() + c.reordered());
    }

    @Test
    void shortMessagesAreUnwrappedAcrossTheirRange() {
        // One-byte messages show k mod 256: 255 then 256 (shown as 0) is in order, skipping 257 is a loss.
        List<Long> stream = upTo(300);
        stream.remove(Long.valueOf(257));
        SequenceChecker c = feed(stream, 1);
        assertEquals(1, c.lost());
        assertEquals(0, c.duplicates() + c.reordered());
    }

    @Test
    void aCorruptMessageCountsOnceAndTakesItsSlot() {
        SequenceChecker c = new SequenceChecker();
        c.accept(message(0, 20));
        ByteBuffer bad = message(1, 20);
        bad.put(15, (byte) 0);
        assertEquals(SequenceChecker.Outcome.CORRUPT, c.accept(bad));
        assertEquals(SequenceChecker.Outcome.OK, c.accept(message(2, 20)));
        assertEquals(1, c.corrupt());
        assertEquals(1, c.problems());
    }
}
