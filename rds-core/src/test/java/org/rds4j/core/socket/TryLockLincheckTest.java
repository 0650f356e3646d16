package org.rds4j.core.socket;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.concurrent.atomic.AtomicInteger;
import org.jetbrains.lincheck.Lincheck;
import org.junit.jupiter.api.Test;
import org.rds4j.core.util.ConcurrentRun;

/**
 * The try-lock of a socket's run appender ({@link TryLock}, {@code SendCoalescer}'s), model-checked by Lincheck at
 * every shared read, write and compare-and-set: two senders each try twice and, when they hold it, update a plain
 * count the way an appender updates the open run. In every interleaving at most one sender holds it at a time and no
 * holder's update is lost.
 */
class TryLockLincheckTest {
    private static final int INVOCATIONS = 500;
    private static final int SENDERS = 2;

    @Test
    void oneHolderAtATime() {
        Lincheck.runConcurrentTest(INVOCATIONS, () -> {
            TryLock lock = new TryLock();
            AtomicInteger holders = new AtomicInteger();
            AtomicInteger mostAtOnce = new AtomicInteger();
            AtomicInteger taken = new AtomicInteger();
            int[] appended = new int[1];                       // the holder's state: plain, as the run's fields
            Runnable[] senders = new Runnable[SENDERS];
            for (int s = 0; s < SENDERS; s++) {
                senders[s] = () -> {
                    for (int i = 0; i < 2; i++) {
                        if (!lock.tryLock()) {
                            continue;                          // the ordinary way
                        }
                        try {
                            mostAtOnce.accumulateAndGet(holders.incrementAndGet(), Math::max);
                            appended[0]++;
                            taken.incrementAndGet();
                            holders.decrementAndGet();
                        } finally {
                            lock.unlock();
                        }
                    }
                };
            }
            ConcurrentRun.all(senders);
            assertEquals(1, mostAtOnce.get(), "holders at once");
            assertEquals(taken.get(), appended[0], "a holder's update lost");
        });
    }
}
