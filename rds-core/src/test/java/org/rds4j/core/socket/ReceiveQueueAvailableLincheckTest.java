package org.rds4j.core.socket;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import org.jetbrains.lincheck.Lincheck;
import org.junit.jupiter.api.Test;
import org.rds4j.core.path.Arrival;
import org.rds4j.core.stack.RdsCounters;
import org.rds4j.core.util.ConcurrentRun;

/**
 * A receive queue's count of what a reader could take ({@link ReceiveQueue}'s {@code available}), model-checked by
 * Lincheck at every shared read, write and lock step: the I/O thread delivers under the queue's lock and publishes the
 * count with a release store; a busy-poll reader spins on it without the lock, then takes under the lock. In every
 * interleaving explored, a spinning reader gets every message delivered, in order, and once all are taken the count
 * says nothing is left. A count left at 0 with a message queued would keep its reader spinning, which Lincheck reports
 * as a hang.
 *
 * <p>Lincheck explores interleavings under sequential consistency: this checks the count's protocol, not what the
 * release store orders (the queue's lock orders what the reader then reads).
 */
class ReceiveQueueAvailableLincheckTest {
    private static final int INVOCATIONS = 500;
    private static final InetSocketAddress PEER = new InetSocketAddress(InetAddress.getLoopbackAddress(), 7000);

    private static final ReceiveQueue.Owner OPEN = new OpenSocket();

    @Test
    void aSpinningReaderGetsEveryMessageInOrder() {
        Lincheck.runConcurrentTest(INVOCATIONS, () -> {
            ReceiveQueue queue = new ReceiveQueue(OPEN, 1 << 20, true, 0, new RdsCounters(), 2, System::nanoTime);
            ConcurrentRun.all(
                    () -> {                                       // the I/O thread: two reads, a message each
                        deliver(queue, 1);
                        deliver(queue, 2);
                    },
                    () -> {                                       // a busy-poll reader waiting for ever
                        assertEquals(1, take(queue), "first message first");
                        assertEquals(2, take(queue), "second message second");
                    });
            assertEquals(0, queue.census()[0], "nothing left to take, and the count says so");
        });
    }

    @Test
    void twoSpinningReadersShareTheMessages() {
        Lincheck.runConcurrentTest(INVOCATIONS, () -> {
            ReceiveQueue queue = new ReceiveQueue(OPEN, 1 << 20, true, 0, new RdsCounters(), 2, System::nanoTime);
            int[] got = new int[2];
            ConcurrentRun.all(
                    () -> {
                        deliver(queue, 1);
                        deliver(queue, 2);
                    },
                    () -> got[0] = take(queue),
                    () -> got[1] = take(queue));
            assertEquals(3, got[0] + got[1], "each reader took one of the two messages");
            assertEquals(0, queue.census()[0], "nothing left to take, and the count says so");
        });
    }

    /** One message of {@code length} bytes (its value in each), delivered as a read's batch of one. */
    private static void deliver(ReceiveQueue queue, int length) {
        Arrival a = queue.claim(length, 0);
        a.target().put(0, (byte) length);
        a.set(PEER, null, 4000, 0L);
        queue.deliver(a, a, 1, length);
    }

    /** Takes the next message, waiting for ever; its length. */
    private static int take(ReceiveQueue queue) {
        try {
            Arrival a = queue.take(Long.MAX_VALUE, false, null, null, null);
            assertNotNull(a, "a wait for ever ends with a message");
            int length = a.length();
            assertEquals(length, a.payload().get(0), "the message's own bytes");
            queue.recycle(a);
            return length;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
