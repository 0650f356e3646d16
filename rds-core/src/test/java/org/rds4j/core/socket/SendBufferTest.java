package org.rds4j.core.socket;

import org.rds4j.core.stack.RdsCounters;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayDeque;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

/**
 * A socket's send budget keeps bytes and messages in one word ({@link SendBuffer}): whatever the order of sends and
 * acknowledgement batches, each count reads back exactly as if kept on its own, zero-length messages included, and a
 * send is taken exactly while less than the budget is in use and fewer than {@link SendBuffer#MAX_MESSAGES} messages
 * are queued. The property draws every step from one seed, which a
 * failure names.
 */
class SendBufferTest {

    @Property(tries = 200)
    void bytesAndMessagesReadBackAsIfCountedApart(@ForAll long seed,
                                                  @ForAll @IntRange(min = 1, max = 1 << 21) int budget) {
        Random random = new Random(seed);
        SendBuffer buffer = new SendBuffer(new RdsCounters(), budget);
        ArrayDeque<Integer> inFlight = new ArrayDeque<>();
        long bytes = 0;
        for (int step = 0; step < 2_000; step++) {
            String where = "seed " + seed + ", budget " + budget + ", step " + step;
            if (random.nextInt(3) > 0) {
                int len = random.nextInt(8) == 0 ? 0 : random.nextInt(Math.min(budget, 1 << 20) + 1);
                int ask = buffer.tryReserve(len);
                if (bytes < budget) {
                    assertEquals(bytes >= budget / 2 ? 1 : 0, ask, where + ": taken, asking past half the budget");
                    inFlight.addLast(len);
                    bytes += len;
                } else {
                    assertEquals(-1, ask, where + ": refused with " + bytes + " of " + budget + " bytes in use");
                }
            } else if (!inFlight.isEmpty()) {
                // An acknowledgement batch gives back the oldest messages, several at once.
                int count = 1 + random.nextInt(inFlight.size());
                long len = 0;
                for (int i = 0; i < count; i++) {
                    len += inFlight.pollFirst();
                }
                buffer.release(count, len);
                bytes -= len;
            }
            assertEquals(bytes, buffer.queuedBytes(), where + ": bytes");
            assertEquals(inFlight.size(), buffer.queuedMessages(), where + ": messages");
            assertEquals(bytes < budget, buffer.hasRoom(), where + ": room");
        }
    }

    @Test
    void zeroLengthMessagesCountWithoutTakingBytes() {
        SendBuffer buffer = new SendBuffer(new RdsCounters(), 1000);
        for (int i = 0; i < 10_000; i++) {
            assertEquals(0, buffer.tryReserve(0));
        }
        assertEquals(0, buffer.queuedBytes());
        assertEquals(10_000, buffer.queuedMessages());
        assertEquals(0, buffer.tryReserve(999), "999 bytes fit in an empty byte budget of 1000");
        assertEquals(1, buffer.tryReserve(1_000_000), "the last send may overshoot; it asks, past half");
        assertEquals(-1, buffer.tryReserve(0), "a full budget refuses even an empty message, as the kernel's");
        buffer.release(10_001, 999);
        assertEquals(1_000_000, buffer.queuedBytes());
        assertEquals(1, buffer.queuedMessages());
        buffer.release(1, 1_000_000);
        assertEquals(0, buffer.queuedBytes());
        assertEquals(0, buffer.queuedMessages());
        assertTrue(buffer.hasRoom());
    }

    @Test
    void theMessageCountStopsAtItsBoundWithoutSpillingIntoTheBytes() {
        SendBuffer buffer = new SendBuffer(new RdsCounters(), 1000);
        assertTrue(SendBuffer.MAX_MESSAGES > 100_000_000L, "the bound is beyond any heap's reach");
        for (long i = 0; i < SendBuffer.MAX_MESSAGES; i++) {
            if (buffer.tryReserve(0) != 0) {
                throw new AssertionError("refused at message " + i + " of " + SendBuffer.MAX_MESSAGES);
            }
        }
        assertEquals(SendBuffer.MAX_MESSAGES, buffer.queuedMessages());
        assertEquals(0, buffer.queuedBytes());
        assertEquals(-1, buffer.tryReserve(0), "one more than the bound");
        assertEquals(-1, buffer.tryReserve(10), "bytes cannot come in either");
        assertFalse(buffer.hasRoom());
        buffer.release(1, 0);
        assertEquals(0, buffer.tryReserve(10), "room for one message again");
        assertEquals(10, buffer.queuedBytes());
        assertEquals(SendBuffer.MAX_MESSAGES, buffer.queuedMessages());
    }
}
