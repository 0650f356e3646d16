package org.rds4j.core.socket;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.rds4j.core.path.Arrival;
import org.rds4j.core.stack.RdsCounters;

/**
 * A blocking receive in the default mode ({@link ReceiveQueue} with a {@link ReplySpin} window): a reader whose
 * socket sent since its last wait yields instead of parking until the window ends, then parks; a reader that sent
 * nothing, or whose replies lately took longer than the window, parks at once. The queue's clock is virtual, so a
 * window never ends unless the test moves the clock: a reader that yields when it should park never reaches the
 * parked state, and one that parks when it should yield is seen parked.
 */
class ReceiveQueueReplySpinTest {
    private static final long WINDOW = 1_000;
    private static final InetSocketAddress PEER = new InetSocketAddress(InetAddress.getLoopbackAddress(), 7000);

    private final OpenSocket socket = new OpenSocket();
    private final AtomicInteger sends = socket.sends;
    private final WatchedWaiter reader = new WatchedWaiter();
    private final ReceiveQueue queue = new ReceiveQueue(socket, 1 << 20, false, WINDOW, new RdsCounters(), 4, reader);

    @AfterEach
    void stopReader() throws InterruptedException {
        reader.stop();
    }

    @Test
    void aReaderThatSentYieldsAndTakesTheReplyWithoutParking() throws Exception {
        sends.incrementAndGet();
        CompletableFuture<Integer> got = startReader();
        awaitSpinning();
        reader.assertNeverParks("its window never ended");
        deliver(7);
        assertEquals(7, got.get(10, TimeUnit.SECONDS));
    }

    @Test
    void theYieldingEndsWithTheWindowAndTheReaderParks() throws Exception {
        sends.incrementAndGet();
        CompletableFuture<Integer> got = startReader();
        awaitSpinning();
        reader.advance(WINDOW);
        reader.awaitParked("the window ended");
        deliver(3);
        assertEquals(3, got.get(10, TimeUnit.SECONDS));
    }

    @Test
    void aReaderThatSentNothingParksAtOnce() throws Exception {
        CompletableFuture<Integer> got = startReader();
        reader.awaitParked("nothing was sent: a one-way reader");
        deliver(5);
        assertEquals(5, got.get(10, TimeUnit.SECONDS));
        assertTrue(reader.clockReads() <= 1,
                "a one-way reader's wait is not timed: " + reader.clockReads() + " clock reads");
    }

    @Test
    void slowRepliesMakeReadersParkAtOnceUntilRepliesAreFastAgain() throws Exception {
        sends.incrementAndGet();
        CompletableFuture<Integer> got = startReader();
        awaitSpinning();
        reader.advance(10 * WINDOW);                           // the reply takes ten windows: the average 2.5
        reader.awaitParked("the window ended");
        deliver(1);
        assertEquals(1, got.get(10, TimeUnit.SECONDS));
        // Each reply now comes at once, taking a quarter off the average: 1875, 1407, 1056, 792 (within the window).
        for (int round = 2; round <= 5; round++) {
            sends.incrementAndGet();
            got = startReader();
            reader.awaitParked("round " + round + ": replies lately took longer than the window");
            deliver(round);
            assertEquals(round, got.get(10, TimeUnit.SECONDS));
        }
        sends.incrementAndGet();
        got = startReader();
        awaitSpinning();
        deliver(6);
        assertEquals(6, got.get(10, TimeUnit.SECONDS), "fast replies again: it yields again");
    }

    /** A reader taking one message, waiting for ever; the value of its first byte. */
    private CompletableFuture<Integer> startReader() {
        return reader.start("reply-spin-reader", () -> {
            Arrival a = queue.take(Long.MAX_VALUE, false, null, null, null);
            assertNotNull(a, "a wait for ever ends with a message");
            int value = a.payload().get(0);
            queue.recycle(a);
            return value;
        });
    }

    /** Waits until the reader reads the clock in a loop: it yields for its reply. */
    private void awaitSpinning() {
        reader.awaitYielding("its reply");
    }

    /** One message of one byte, {@code value}, delivered as a read's batch of one. */
    private void deliver(int value) {
        Arrival a = queue.claim(1, 0);
        a.target().put(0, (byte) value);
        a.set(PEER, null, 4000, 0L);
        queue.deliver(a, a, 1, 1);
    }
}
