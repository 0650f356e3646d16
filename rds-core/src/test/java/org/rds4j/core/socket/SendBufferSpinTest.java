package org.rds4j.core.socket;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.fail;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.rds4j.EbadfException;
import org.rds4j.EintrException;
import org.rds4j.core.stack.RdsCounters;
import org.rds4j.core.stack.RdsCounters.Counter;

/**
 * A blocking sender that finds its send budget full ({@link SendBuffer} with a {@link ReplySpin} window): it yields
 * instead of parking until the window ends, then parks; once budget waits took longer than a quarter of the window
 * on average it parks at once, until fast waits bring the yielding back. The clock is virtual, so a window never ends
 * unless the test moves it: a sender that yields when it should park is never seen parked, and one that parks when
 * it should yield is.
 */
class SendBufferSpinTest {
    private static final long BUDGET = 100;
    private static final long WINDOW = 1_000;
    private static final String SENDER = "budget-spin-sender";

    private final WatchedWaiter sender = new WatchedWaiter();
    private final RdsCounters counters = new RdsCounters();
    private final AtomicBoolean closed = new AtomicBoolean();
    private final SendBuffer.Owner socket = () -> {
        if (closed.get()) {
            throw new EbadfException("closed by the test");
        }
    };

    @AfterEach
    void stopSender() throws InterruptedException {
        sender.stop();
    }

    private SendBuffer budget(long window) {
        SendBuffer b = new SendBuffer(counters, BUDGET, Long.MAX_VALUE, window, sender);
        assertEquals(0, b.tryReserve((int) BUDGET), "the budget taken whole by one message");
        return b;
    }

    @Test
    void aSenderFindingTheBudgetFullYieldsAndGetsInWithoutParking() throws Exception {
        SendBuffer b = budget(WINDOW);
        CompletableFuture<Boolean> in = startSender(b, 10);
        awaitSpinning();
        sender.assertNeverParks("its window never ended");
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
        sender.advance(WINDOW);
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
        assertEquals(0, sender.clockReads(), "a wait without a window is not timed");
    }

    @Test
    void slowBudgetWaitsMakeSendersParkAtOnceUntilWaitsAreFastAgain() throws Exception {
        SendBuffer b = budget(WINDOW);
        CompletableFuture<Boolean> in = startSender(b, (int) BUDGET);
        awaitSpinning();
        sender.advance(10 * WINDOW);                           // the budget comes back after ten windows
        awaitParked("the window ended");
        b.release(1, BUDGET);
        in.get(10, TimeUnit.SECONDS);
        // The average is 2500; each parked wait now ends at once, taking a quarter off it: 1875, 1406, 1054, 790, 592,
        // 444, 333, then 249, within a quarter of the window.
        for (int round = 2; round <= 9; round++) {
            in = startSender(b, (int) BUDGET);
            awaitParked("round " + round + ": budget waits lately took longer than a quarter of the window");
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
    void aParkedSendersWaitEndsWithTheReleaseNotWithItsLateWakeUp() throws Exception {
        // The sender's own clock readings run ten windows ahead once it is woken, as if its wake-up took that long;
        // the releasing thread's do not. Timed to its running again, every wait would count ten windows and the
        // sender would park for good; timed to the release, the waits are short and the yielding comes back.
        AtomicBoolean lateWakeUp = new AtomicBoolean();
        LongSupplier clock = () -> sender.getAsLong()
                + (lateWakeUp.get() && Thread.currentThread().getName().equals(SENDER) ? 10 * WINDOW : 0);
        SendBuffer b = new SendBuffer(counters, BUDGET, Long.MAX_VALUE, WINDOW, clock);
        assertEquals(0, b.tryReserve((int) BUDGET), "the budget taken whole by one message");
        CompletableFuture<Boolean> in = startSender(b, (int) BUDGET);
        awaitSpinning();
        sender.advance(10 * WINDOW);                           // the budget comes back after ten windows
        awaitParked("the window ended");
        b.release(1, BUDGET);
        in.get(10, TimeUnit.SECONDS);
        // The average is 2500; each wait now lasts one tick to its release, taking a quarter off it (as above).
        for (int round = 2; round <= 9; round++) {
            in = startSender(b, (int) BUDGET);
            awaitParked("round " + round + ": budget waits lately took longer than a quarter of the window");
            sender.advance(1);
            lateWakeUp.set(true);
            b.release(1, BUDGET);
            in.get(10, TimeUnit.SECONDS);
            lateWakeUp.set(false);
        }
        in = startSender(b, (int) BUDGET);
        awaitSpinning();
        b.release(1, BUDGET);
        in.get(10, TimeUnit.SECONDS);
        assertEquals(BUDGET, b.queuedBytes(), "every sender got in, one after another");
    }

    @Test
    void waitsWithinTheWindowButLongerThanAQuarterOfItMakeSendersParkAtOnce() throws Exception {
        SendBuffer b = budget(WINDOW);
        CompletableFuture<Boolean> in = startSender(b, (int) BUDGET);
        awaitSpinning();
        sender.advance(WINDOW / 2);                            // half a window: the sender still yields
        sender.assertNeverParks("half its window is left");
        b.release(1, BUDGET);
        in.get(10, TimeUnit.SECONDS);
        // One wait of half a window, counted for a quarter, puts the average at an eighth of the window (125): still
        // worth yielding. Two more such waits take it past a quarter (218, 288), and the next sender parks at once.
        for (int round = 2; round <= 3; round++) {
            in = startSender(b, (int) BUDGET);
            awaitSpinning();
            sender.advance(WINDOW / 2);
            b.release(1, BUDGET);
            in.get(10, TimeUnit.SECONDS);
        }
        in = startSender(b, (int) BUDGET);
        awaitParked("budget waits of half the window, on average past a quarter of it");
        b.release(1, BUDGET);
        in.get(10, TimeUnit.SECONDS);
        assertEquals(BUDGET, b.queuedBytes());
    }

    @Test
    void aCloseWhileTheSenderYieldsEndsItsWaitWithEbadf() throws Exception {
        assertYieldingEndsWith(() -> closed.set(true), EbadfException.class);
    }

    @Test
    void anInterruptWhileTheSenderYieldsEndsItsWaitWithEintr() throws Exception {
        assertYieldingEndsWith(sender::interrupt, EintrException.class);
    }

    /** While a sender yields for the budget, {@code cause} ends its wait with {@code expected}, nothing taken. */
    private void assertYieldingEndsWith(Runnable cause, Class<? extends Exception> expected) throws Exception {
        SendBuffer b = budget(WINDOW);
        CompletableFuture<Boolean> in = startSender(b, 10);
        awaitSpinning();
        cause.run();
        ExecutionException e = assertThrowsWithin(in);
        assertInstanceOf(expected, e.getCause());
        assertEquals(BUDGET, b.queuedBytes(), "nothing was taken for the refused message");
    }

    /** A sender reserving {@code len} bytes, waiting for ever; whether its message asks for an acknowledgement. */
    private CompletableFuture<Boolean> startSender(SendBuffer b, int len) {
        return sender.start(SENDER, () -> b.reserve(len, true, 0, socket));
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
        sender.awaitYielding("the budget");
    }

    private void awaitParked(String why) {
        sender.awaitParked(why);
    }
}
