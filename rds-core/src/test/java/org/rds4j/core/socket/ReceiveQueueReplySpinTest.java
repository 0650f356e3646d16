package org.rds4j.core.socket;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
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
    private static final long PATIENCE_NANOS = TimeUnit.SECONDS.toNanos(10);
    private static final InetSocketAddress PEER = new InetSocketAddress(InetAddress.getLoopbackAddress(), 7000);

    private final OpenSocket socket = new OpenSocket();
    private final AtomicInteger sends = socket.sends;
    private final AtomicLong now = new AtomicLong(1_000_000);
    private final AtomicLong clockReads = new AtomicLong();
    private final ReceiveQueue queue = new ReceiveQueue(socket, 1 << 20, false, WINDOW, new RdsCounters(), 4, () -> {
        clockReads.incrementAndGet();
        return now.get();
    });
    private Thread reader;

    @AfterEach
    void stopReader() throws InterruptedException {
        if (reader != null && reader.isAlive()) {
            reader.interrupt();
            reader.join(TimeUnit.NANOSECONDS.toMillis(PATIENCE_NANOS));
        }
    }

    @Test
    void aReaderThatSentYieldsAndTakesTheReplyWithoutParking() throws Exception {
        sends.incrementAndGet();
        CompletableFuture<Integer> got = startReader();
        awaitSpinning();
        for (int i = 0; i < 100; i++) {
            assertNotEquals(Thread.State.WAITING, reader.getState(), "parked although its window never ended");
            Thread.yield();
        }
        deliver(7);
        assertEquals(7, got.get(10, TimeUnit.SECONDS));
    }

    @Test
    void theYieldingEndsWithTheWindowAndTheReaderParks() throws Exception {
        sends.incrementAndGet();
        CompletableFuture<Integer> got = startReader();
        awaitSpinning();
        now.addAndGet(WINDOW);
        awaitParked("the window ended");
        deliver(3);
        assertEquals(3, got.get(10, TimeUnit.SECONDS));
    }

    @Test
    void aReaderThatSentNothingParksAtOnce() throws Exception {
        CompletableFuture<Integer> got = startReader();
        awaitParked("nothing was sent: a one-way reader");
        deliver(5);
        assertEquals(5, got.get(10, TimeUnit.SECONDS));
        assertTrue(clockReads.get() <= 1, "a one-way reader's wait is not timed: " + clockReads.get() + " clock reads");
    }

    @Test
    void slowRepliesMakeReadersParkAtOnceUntilRepliesAreFastAgain() throws Exception {
        sends.incrementAndGet();
        CompletableFuture<Integer> got = startReader();
        awaitSpinning();
        now.addAndGet(10 * WINDOW);                           // the reply takes ten windows: the average 2.5
        awaitParked("the window ended");
        deliver(1);
        assertEquals(1, got.get(10, TimeUnit.SECONDS));
        // Each reply now comes at once, taking a quarter off the average: 1875, 1407, 1056, 792 (within the window).
        for (int round = 2; round <= 5; round++) {
            sends.incrementAndGet();
            got = startReader();
            awaitParked("round " + round + ": replies lately took longer than the window");
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
        CompletableFuture<Integer> got = new CompletableFuture<>();
        reader = new Thread(() -> {
            try {
                Arrival a = queue.take(Long.MAX_VALUE, false, null, null, null);
                assertNotNull(a, "a wait for ever ends with a message");
                int value = a.payload().get(0);
                queue.recycle(a);
                got.complete(value);
            } catch (Throwable t) {
                got.completeExceptionally(t);
            }
        }, "reply-spin-reader");
        reader.start();
        return got;
    }

    /** Waits until the reader reads the clock in a loop: it yields for its reply. */
    private void awaitSpinning() {
        long before = clockReads.get();
        await(() -> clockReads.get() - before > 100, "the reader to yield for its reply, reading the clock");
    }

    private void awaitParked(String why) {
        await(() -> reader.getState() == Thread.State.WAITING, "the reader to park (" + why + ")");
    }

    private static void await(BooleanSupplier condition, String what) {
        long deadline = System.nanoTime() + PATIENCE_NANOS;
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                fail("waited 10 s for " + what);
            }
            Thread.yield();
        }
    }

    /** One message of one byte, {@code value}, delivered as a read's batch of one. */
    private void deliver(int value) {
        Arrival a = queue.claim(1, 0);
        a.target().put(0, (byte) value);
        a.set(PEER, null, 4000, 0L);
        queue.deliver(a, a, 1, 1);
    }
}
