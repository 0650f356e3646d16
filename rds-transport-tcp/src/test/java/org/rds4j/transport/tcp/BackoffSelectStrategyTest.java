package org.rds4j.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.channel.SelectStrategy;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * {@link BackoffSelectStrategy}: work resets the idle clock and is handed to Netty at once, an idle thread keeps
 * polling for its yield time and then sleeps, and busy-poll never sleeps. Times are chosen so that a descheduled test
 * thread cannot change the outcome: the yield times are either far longer than the test or zero.
 */
class BackoffSelectStrategyTest {
    private static final long LONG = TimeUnit.SECONDS.toNanos(60);

    @Test
    void readyEventsAndTasksAreHandedOverAtOnce() throws Exception {
        BackoffSelectStrategy s = new BackoffSelectStrategy(0);
        assertEquals(3, s.calculateStrategy(() -> 3, false), "the ready events from the zero-timeout poll");
        assertEquals(0, s.calculateStrategy(() -> 0, true), "tasks waiting: no sleep, Netty runs them");
    }

    @Test
    void withoutYieldTimeAnIdleThreadSleepsAtOnce() throws Exception {
        BackoffSelectStrategy s = new BackoffSelectStrategy(0);
        assertEquals(SelectStrategy.SELECT, s.calculateStrategy(() -> 0, false));
    }

    @Test
    void anIdleThreadPollsForItsYieldTime() throws Exception {
        BackoffSelectStrategy s = new BackoffSelectStrategy(LONG);
        int[] polls = {0};
        for (int i = 0; i < 100; i++) {
            assertEquals(SelectStrategy.CONTINUE, s.calculateStrategy(() -> {
                polls[0]++;
                return 0;
            }, false), "turn " + i);
        }
        assertEquals(100, polls[0], "every turn polls epoll without blocking");
    }

    @Test
    void anIdleThreadSleepsOnceItsYieldTimeHasPassed() throws Exception {
        BackoffSelectStrategy s = new BackoffSelectStrategy(TimeUnit.MILLISECONDS.toNanos(1));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        int turns = 0;
        int outcome;
        do {
            outcome = s.calculateStrategy(() -> 0, false);
            turns++;
        } while (outcome == SelectStrategy.CONTINUE && System.nanoTime() - deadline < 0);
        assertEquals(SelectStrategy.SELECT, outcome, "still polling after " + turns + " turns and 10 s");
    }

    @Test
    void workStartsTheIdleTimeAgain() throws Exception {
        BackoffSelectStrategy s = new BackoffSelectStrategy(TimeUnit.MILLISECONDS.toNanos(500));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (s.calculateStrategy(() -> 0, false) == SelectStrategy.CONTINUE) {
            assertTrue(System.nanoTime() - deadline < 0, "still polling after 10 s");
        }
        assertEquals(1, s.calculateStrategy(() -> 1, false));
        assertEquals(SelectStrategy.CONTINUE, s.calculateStrategy(() -> 0, false), "idle for 500 ms again");
    }

    @Test
    void aNegativeTimeIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> new BackoffSelectStrategy(-1));
    }
}
