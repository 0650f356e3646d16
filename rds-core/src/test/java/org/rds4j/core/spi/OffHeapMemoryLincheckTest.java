package org.rds4j.core.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.atomic.AtomicLong;
import org.jetbrains.lincheck.Lincheck;
import org.junit.jupiter.api.Test;
import org.rds4j.core.util.ConcurrentRun;

/**
 * The off-heap account's reservations ({@link OffHeapMemory#tryReserve}, its high-water mark and refusals),
 * model-checked by Lincheck at every shared read and write: three threads each reserve twice against the core's share,
 * looking at the count in between, while a transport pool holds some. In every interleaving the share is never
 * exceeded by what was granted, every refusal is counted, the count is what was granted plus the pool, and the
 * high-water mark is at least every count seen.
 */
class OffHeapMemoryLincheckTest {
    private static final int INVOCATIONS = 100;
    private static final int THREADS = 3;
    private static final long BOUND = 200;                     // the core's share, 50%: 100
    private static final int BLOCK = 40;
    private static final long POOL = 10;

    @Test
    void theShareIsNeverExceededAndTheCountsAddUp() {
        Lincheck.runConcurrentTest(INVOCATIONS, () -> {
            OffHeapMemory memory = new OffHeapMemory(BOUND);
            AtomicLong pool = new AtomicLong(POOL);
            memory.addPool(pool::get);
            int[] granted = new int[THREADS];
            int[] refused = new int[THREADS];
            long[] seen = new long[THREADS];
            Runnable[] threads = new Runnable[THREADS];
            for (int t = 0; t < THREADS; t++) {
                int me = t;
                threads[t] = () -> {
                    for (int i = 0; i < 2; i++) {
                        if (memory.tryReserve(BLOCK)) {
                            granted[me]++;
                        } else {
                            refused[me]++;
                        }
                        if (i == 0) {
                            seen[me] = memory.inUse();
                        }
                    }
                };
            }
            ConcurrentRun.all(threads);
            int grants = 0;
            int refusals = 0;
            long mostSeen = 0;
            for (int t = 0; t < THREADS; t++) {
                grants += granted[t];
                refusals += refused[t];
                mostSeen = Math.max(mostSeen, seen[t]);
            }
            long share = BOUND / 100 * OffHeapMemory.CORE_PERCENT;
            assertTrue(POOL + (long) grants * BLOCK <= share, "granted past the core's share: " + grants + " blocks");
            assertEquals(refusals, memory.refusals(), "refusals counted");
            assertEquals(POOL + (long) grants * BLOCK, memory.inUse(), "bytes in use");
            assertTrue(memory.highWater() >= mostSeen, "a count seen above the high-water mark");
        });
    }
}
