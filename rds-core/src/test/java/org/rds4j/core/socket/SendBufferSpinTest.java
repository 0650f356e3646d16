package org.rds4j.core.socket;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.rds4j.EbadfException;
import org.rds4j.EintrException;
import org.rds4j.core.stack.RdsCounters;
import org.rds4j.core.stack.RdsCounters.Counter;

/**
 * A blocking sender that finds its send budget full ({@link SendBuffer} with a {@link ReplySpin} window): it yields
 * instead of parking until the window ends, then parks; once budget waits took longer than the window on average it
 * parks at once, until fast waits bring the yielding back. The clock is virtual, so a window never ends unless the
 * test moves it: a sender that yields when it should park is never seen parked, and one that parks when it should
 * yield is.
 */
class SendBufferSpinTest {
    private static final long BUDGET = 100;
    private static final long WINDOW = 1_000;
    private static final long PATIENCE_NANOS = TimeUnit.SECONDS.toNanos(10);

    private final AtomicLong now = new AtomicLong(1_000_000);
    private final AtomicLong clockReads = new AtomicLong();
    private final RdsCounters counters = new RdsCounters();
    private final AtomicBoolean closed = new AtomicBoolean();
    private final SendBuffer.Owner socket = () -> {
        if (closed.get()) {
            throw new EbadfException("closed by the test");
        }
    };
    private Thread sender;

    @AfterEach
    void stopSender() throws InterruptedException {
        if (sender != null && sender.isAlive()) {
            sender.interrupt();
            sender.join(TimeUnit.NANOSECONDS.toMillis(PATIENCE_NANOS));
        }
    }

    private SendBuffer budget(long window) {
        SendBuffer b = new SendBuffer(counters, BUDGET, Long.MAX_VALUE, window, () -> {
            clockReads.incrementAndGet();
            return now.get();
        });
        assertEquals(0, b.tryReserve((int) BUDGET), "the budget taken whole by one message");
        return b;
    }

    @Test
    void aSenderFindingTheBudgetFullYieldsAndGetsInWithoutParking() throws Exception {
        SendBuffer b = budget(WINDOW);
        CompletableFuture<Boolean> in = startSender(b, 10);
        awaitSpinning();
        for (int i = 0; i < 100; i++) {
            assertNotParked("its window never ended");
            Thread.yield();
        }
        b.release(1, BUDGET);
        assertEquals(false, in.get(10, TimeUnit.SECONDS), "10 of 100 bytes in use: no ack asked for");
        assertEquals(10, b.queuedBytes());
        assertEquals(1, counters.get(Counter.SEND_QUEUE_FULL), "the full budget is counted once");
    }

    @Test
    void theYieldingEndsWithTheWindowAndTheSenderParks() throws Exception {
        SendBuffer b = budget(WINDOW);
        CompletableFuture<Boolean> in = startSender(b, 10);
        awaitSpinning();
        now.addAndGet(WINDOW);
        awaitParked("the window ended");
        b.release(1, BUDGET);
        in.get(10, TimeUnit.SECONDS);
        assertEquals(10, b.queuedBytes());
    }

    @Test
    void withoutAWindowTheSenderParksAtOnceAndReadsNoClock() throws Exception {
        SendBuffer b = budget(0);
        CompletableFuture<Boolean> in = startSender(b, 10);
        awaitParked("no window");
        b.release(1, BUDGET);
        in.get(10, TimeUnit.SECONDS);
        assertEquals(0, clockReads.get(), "a wait without a window is not timed");
    }

    @Test
    void slowBudgetWaitsMakeSendersParkAtOnceUntilWaitsAreFastAgain() throws Exception {
        SendBuffer b = budget(WINDOW);
        CompletableFuture<Boolean> in = startSender(b, (int) BUDGET);
        awaitSpinning();
        now.addAndGet(10 * WINDOW);                           // the budget comes back after ten windows
        awaitParked("the window ended");
        b.release(1, BUDGET);
        in.get(10, TimeUnit.SECONDS);
        // Each wait now ends at once, taking a quarter off the average: 1875, 1407, 1056, 792 (within the window).
        for (int round = 2; round <= 5; round++) {
            in = startSender(b, (int) BUDGET);
            awaitParked("round " + round + ": budget waits lately took longer than the window");
            b.release(1, BUDGET);
            in.get(10, TimeUnit.SECONDS);
        }
        in = startSender(b, (int) BUDGET);
        awaitSpinning();
        b.release(1, BUDGET);
        in.get(10, TimeUnit.SECONDS);
        assertEquals(BUDGET, b.queuedBytes(), "every sender got in, one after another");
    }

    @Test
    void aCloseWhileTheSenderYieldsEndsItsWaitWithEbadf() throws Exception {
        SendBuffer b = budget(WINDOW);
        CompletableFuture<Boolean> in = startSender(b, 10);
        awaitSpinning();
        closed.set(true);
        ExecutionException e = assertThrowsWithin(in);
        assertInstanceOf(EbadfException.class, e.getCause());
        assertEquals(BUDGET, b.queuedBytes(), "nothing was taken for the refused message");
    }

    @Test
    void anInterruptWhileTheSenderYieldsEndsItsWaitWithEintr() throws Exception {
        SendBuffer b = budget(WINDOW);
        CompletableFuture<Boolean> in = startSender(b, 10);
        awaitSpinning();
        sender.interrupt();
        ExecutionException e = assertThrowsWithin(in);
        assertInstanceOf(EintrException.class, e.getCause());
        assertEquals(BUDGET, b.queuedBytes(), "nothing was taken for the refused message");
    }

    /** A sender reserving {@code len} bytes, waiting for ever; whether its message asks for an acknowledgement. */
    private CompletableFuture<Boolean> startSender(SendBuffer b, int len) {
        CompletableFuture<Boolean> in = new CompletableFuture<>();
        sender = new Thread(() -> {
            try {
                in.complete(b.reserve(len, true, 0, socket));
            } catch (Throwable t) {
                in.completeExceptionally(t);
            }
        }, "budget-spin-sender");
        sender.start();
        return in;
    }

    private static ExecutionException assertThrowsWithin(CompletableFuture<Boolean> in) throws Exception {
        try {
            in.get(10, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            return e;
        }
        return fail("the send got in although its wait should have failed");
    }

    /** Waits until the sender reads the clock in a loop: it yields for the budget. */
    private void awaitSpinning() {
        long before = clockReads.get();
        await(() -> clockReads.get() - before > 100, "the sender to yield for the budget, reading the clock");
    }

    private void assertNotParked(String why) {
        Thread.State s = sender.getState();
        assertTrue(s != Thread.State.WAITING && s != Thread.State.TIMED_WAITING, "parked although " + why + ": " + s);
    }

    private void awaitParked(String why) {
        await(() -> sender.getState() == Thread.State.WAITING || sender.getState() == Thread.State.TIMED_WAITING,
                "the sender to park (" + why + ")");
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
}
