package org.rds4j.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.netty.channel.EventLoop;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SelectStrategy;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;

/**
 * {@link BackoffSelectStrategy}: work resets the idle clock and is handed to Netty at once, an idle thread keeps
 * polling for its yield time and then sleeps, and busy-poll never sleeps; a yielding NIO loop does not wake itself.
 * Times are chosen so that a descheduled test thread cannot change the outcome: the yield times are either far longer
 * than the test or zero.
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

    /**
     * A task from another thread makes Netty's NIO handler ask for a wake-up, which it keeps asking for until the
     * loop sleeps; a loop that yields must not write the selector's eventfd on each turn meanwhile. The loop thread's
     * write calls are counted by Linux ({@code syscw} in {@code /proc/thread-self/io}) across at least 20 ms of its
     * CPU time spent yielding: thousands of turns.
     */
    @Test
    void aYieldingNioLoopDoesNotWakeItselfOnEveryTurn() throws Exception {
        assertNotNull(BackoffSelectStrategy.NIO_SELECTOR, "Netty's NioIoHandler.selector(), which NIO loops select on");
        assumeTrue(Files.isReadable(THREAD_IO), "Linux's per-thread I/O counts");
        var threads = ManagementFactory.getThreadMXBean();
        assumeTrue(threads.isThreadCpuTimeSupported() && threads.isThreadCpuTimeEnabled(), "thread CPU time");
        MultiThreadIoEventLoopGroup group = new MultiThreadIoEventLoopGroup(1, BackoffSelectStrategy.nioFactory(LONG));
        try {
            EventLoop loop = group.next();
            long before = loop.submit(BackoffSelectStrategyTest::writeCalls).get(10, TimeUnit.SECONDS);
            Thread thread = loop.submit(Thread::currentThread).get(10, TimeUnit.SECONDS);
            long cpuFrom = threads.getThreadCpuTime(thread.getId());
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (threads.getThreadCpuTime(thread.getId()) - cpuFrom < TimeUnit.MILLISECONDS.toNanos(20)) {
                assertTrue(System.nanoTime() - deadline < 0, "the loop used under 20 ms of CPU in 30 s");
                LockSupport.parkNanos(200_000);
            }
            long after = loop.submit(BackoffSelectStrategyTest::writeCalls).get(10, TimeUnit.SECONDS);
            long cpu = threads.getThreadCpuTime(thread.getId()) - cpuFrom;
            System.out.printf("yielding NIO loop: %d write calls in %.1f ms of its CPU%n", after - before, cpu / 1e6);
            assertTrue(after - before <= 1, "the yielding loop made " + (after - before) + " write calls");
        } finally {
            group.shutdownGracefully(0, 0, TimeUnit.SECONDS).await(10, TimeUnit.SECONDS);
        }
    }

    private static final Path THREAD_IO = Path.of("/proc/thread-self/io");

    /** The calling thread's write calls so far, as Linux counts them. */
    private static long writeCalls() throws IOException {
        for (String line : Files.readAllLines(THREAD_IO)) {
            if (line.startsWith("syscw:")) {
                return Long.parseLong(line.substring(6).trim());
            }
        }
        throw new IOException("no syscw line in " + THREAD_IO);
    }

    @Test
    void aNegativeTimeIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> new BackoffSelectStrategy(-1));
    }
}
