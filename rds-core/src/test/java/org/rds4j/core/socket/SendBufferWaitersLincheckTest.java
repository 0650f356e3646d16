package org.rds4j.core.socket;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.concurrent.atomic.AtomicLong;
import org.jetbrains.lincheck.Lincheck;
import org.junit.jupiter.api.Test;
import org.rds4j.core.stack.RdsCounters;
import org.rds4j.core.util.ConcurrentRun;

/**
 * A full send budget's waiting senders ({@link SendBuffer}'s {@code waiters}), model-checked by Lincheck at every
 * shared read, write, compare-and-set, park and unpark: a sender that finds no room counts itself in under the
 * buffer's lock before it looks at the word again, and a release changes the word before it reads the count without
 * the lock. In every interleaving explored, no sender stays asleep once a release has made room for it.
 *
 * <p>The senders wait for ever and in one piece (no 100 ms safety net), and the waiting itself,
 * {@link org.rds4j.core.util.WaitQueue}, ends only when a signaller marks the waiter: a park that Lincheck lets return
 * early goes back to sleep. A lost wake-up is then a sender that never ends, which Lincheck reports as a hang.
 *
 * <p>A sender that yields before it parks ({@code replySpin}) steps out of the count while it yields and back in
 * before it looks again; its clock here moves one step per reading, so its window ends after two looks and it parks.
 */
class SendBufferWaitersLincheckTest {
    private static final int INVOCATIONS = 500;
    private static final SendBuffer.Owner OPEN = () -> { };

    @Test
    void aReleaseWakesTheSenderItMadeRoomFor() {
        Lincheck.runConcurrentTest(INVOCATIONS, () -> {
            SendBuffer buffer = new SendBuffer(new RdsCounters(), 2, Long.MAX_VALUE, 0, System::nanoTime);
            assertEquals(0, buffer.tryReserve(2), "the budget taken whole");
            ConcurrentRun.all(
                    () -> reserve(buffer, 1),                 // finds it full and waits
                    () -> buffer.release(1, 2));              // the peer acknowledged the first message
            assertEquals(1, buffer.queuedBytes(), "the waiting sender's message is in, the first one out");
        });
    }

    @Test
    void twoWaitingSendersBothGetIn() {
        Lincheck.runConcurrentTest(INVOCATIONS, () -> {
            SendBuffer buffer = new SendBuffer(new RdsCounters(), 2, Long.MAX_VALUE, 0, System::nanoTime);
            assertEquals(0, buffer.tryReserve(2), "the budget taken whole");
            ConcurrentRun.all(
                    () -> reserve(buffer, 1),
                    () -> reserve(buffer, 0),                 // no bytes, still a message: waits for room too
                    () -> buffer.release(1, 2));
            assertEquals(1, buffer.queuedBytes(), "both waiting senders' messages are in");
            assertEquals(2, buffer.queuedMessages(), "both waiting senders' messages are in");
        });
    }

    @Test
    void aSenderThatYieldsFirstStillGetsWokenOnceItParks() {
        Lincheck.runConcurrentTest(INVOCATIONS, () -> {
            AtomicLong clock = new AtomicLong();
            SendBuffer buffer = new SendBuffer(new RdsCounters(), 2, Long.MAX_VALUE, 2, clock::incrementAndGet);
            assertEquals(0, buffer.tryReserve(2), "the budget taken whole");
            ConcurrentRun.all(
                    () -> reserve(buffer, 1),                 // finds it full, yields for two looks, then parks
                    () -> buffer.release(1, 2));
            assertEquals(1, buffer.queuedBytes(), "the yielding sender's message is in, the first one out");
        });
    }

    private static void reserve(SendBuffer buffer, int len) {
        try {
            buffer.reserve(len, true, 0, OPEN);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
