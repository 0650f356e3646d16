package org.rds4j.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.channel.SelectStrategy;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * {@link DeferredTransmits} and the select strategy that keeps them: a task runs once its deadline has passed and not
 * before, and a thread with a task waiting does not sleep. Deadlines are a minute away or a minute gone, so that a
 * descheduled test thread cannot change the outcome.
 */
class DeferredTransmitsTest {
    private static final long MINUTE = TimeUnit.MINUTES.toNanos(1);

    @Test
    void tasksRunOnceTheirDeadlineHasPassedAndOnlyThen() {
        DeferredTransmits d = new DeferredTransmits();
        List<Integer> ran = new ArrayList<>();
        long now = System.nanoTime();
        for (int i = 0; i < 20; i++) {                   // past the arrays' first size
            int k = i;
            d.add(() -> ran.add(k), i % 2 == 0 ? now - MINUTE : now + MINUTE);
        }
        assertTrue(d.runDue(now));
        assertEquals(List.of(0, 2, 4, 6, 8, 10, 12, 14, 16, 18), ran, "the ten that were due, each once");
        assertTrue(d.pending());
        assertFalse(d.runDue(now), "nothing else is due");
        assertTrue(d.runDue(now + 2 * MINUTE));
        assertEquals(20, ran.size(), "the rest, once their time came");
        assertFalse(d.pending());
        assertFalse(d.runDue(now + 3 * MINUTE));
    }

    @Test
    void aThreadWithAPassWaitingDoesNotSleepAndAsksForItWhenDue() throws Exception {
        BackoffSelectStrategy s = new BackoffSelectStrategy(0);     // sleeps at once when idle
        assertEquals(SelectStrategy.SELECT, s.calculateStrategy(() -> 0, false), "idle, nothing owed: sleeps");
        DeferredTransmits d = DeferredTransmits.ofThisThread();
        assertSame(d, DeferredTransmits.ofThisThread(), "the strategy made its passes the thread's");
        int[] runs = {0};
        d.add(() -> runs[0]++, System.nanoTime() + MINUTE);
        assertEquals(SelectStrategy.CONTINUE, s.calculateStrategy(() -> 0, false), "a pass waits: no sleep");
        assertEquals(0, runs[0]);
        d.add(() -> runs[0]++, System.nanoTime() - MINUTE);
        int r = s.calculateStrategy(() -> 0, false);
        assertEquals(1, runs[0], "the due one was asked for");
        assertNotEquals(SelectStrategy.SELECT, r);
        assertNotEquals(SelectStrategy.CONTINUE, r, "and the loop runs its tasks now");
    }

    /** Over a real connection: a pass asked for at a deadline comes, on the connection's event loop. */
    @Test
    void aPassAskedForAtADeadlineComes() throws Exception {
        try (Stacks s = new Stacks()) {
            RecordingHandler client = s.connect()[0];
            int before = client.transmitCalls.get();
            assertTrue(onLoop(s, client, 1_000), "a yielding epoll loop keeps deadlines");
            RawPeer.await(() -> client.transmitCalls.get() > before, Stacks.WAIT, () -> "the pass came");
            assertFalse(client.connection.requestTransmitAfter(1_000), "not from another thread");
        }
    }

    /** A loop that sleeps at once ({@code tcp.yieldMicros=0}, Netty's own strategy) keeps no deadlines. */
    @Test
    void aLoopThatSleepsAtOnceKeepsNoDeadlines() throws Exception {
        try (Stacks s = new Stacks(Map.of("tcp.yieldMicros", "0"))) {
            RecordingHandler client = s.connect()[0];
            assertFalse(onLoop(s, client, 1_000), "the core is told to act at once");
        }
    }

    /** {@code requestTransmitAfter} on the client connection's I/O thread, as the core calls it. */
    private static boolean onLoop(Stacks s, RecordingHandler client, long delayNanos) throws Exception {
        CompletableFuture<Boolean> r = new CompletableFuture<>();
        s.cli.ioThread(Stacks.CLIENT, Stacks.SERVER).execute(
                () -> r.complete(client.connection.requestTransmitAfter(delayNanos)));
        return r.get(Stacks.WAIT.toSeconds(), TimeUnit.SECONDS);
    }
}
