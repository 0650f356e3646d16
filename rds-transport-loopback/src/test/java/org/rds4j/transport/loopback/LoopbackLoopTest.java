package org.rds4j.transport.loopback;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.rds4j.RdsSocket;
import org.rds4j.RdsStack;
import org.rds4j.RdsStackConfig;

/**
 * {@link LoopbackLoop}: every task runs once, each producer's in the order it queued them, whether the thread is
 * yielding or parked when they come; a full queue makes producers wait and the loop's own thread run its task at
 * once; a close runs what was queued and refuses the rest.
 */
@Timeout(60)
class LoopbackLoopTest {
    private static final long LONG = 60_000_000_000L;       // 60 s: longer than any test here

    @ParameterizedTest(name = "yield {0} ns")
    @ValueSource(longs = {0, 50_000, LONG})
    void everyProducersTasksRunOnceInOrder(long yieldNanos) throws Exception {
        LoopbackLoop loop = new LoopbackLoop("test-order", 8, yieldNanos);   // small: producers meet a full queue
        int producers = 3;
        int each = 20_000;
        List<List<Integer>> seen = new ArrayList<>();
        for (int p = 0; p < producers; p++) {
            seen.add(new ArrayList<>());                      // each list written by the loop's thread only
        }
        CountDownLatch done = new CountDownLatch(producers * each);
        List<Thread> threads = new ArrayList<>();
        for (int p = 0; p < producers; p++) {
            List<Integer> mine = seen.get(p);
            Thread t = new Thread(() -> {
                for (int i = 0; i < each; i++) {
                    int n = i;
                    assertTrue(loop.execute(() -> {
                        mine.add(n);
                        done.countDown();
                    }));
                }
            });
            threads.add(t);
            t.start();
        }
        assertTrue(done.await(30, TimeUnit.SECONDS), "tasks left: " + done.getCount());
        for (Thread t : threads) {
            t.join(10_000);
        }
        CountDownLatch read = new CountDownLatch(1);
        loop.execute(read::countDown);                      // the lists, as the loop's thread wrote them
        assertTrue(read.await(10, TimeUnit.SECONDS));
        for (List<Integer> mine : seen) {
            assertEquals(each, mine.size());
            for (int i = 0; i < each; i++) {
                assertEquals(i, mine.get(i));
            }
        }
        loop.close(10, TimeUnit.SECONDS);
    }

    @Test
    void aTaskWakesAParkedThread() throws Exception {
        LoopbackLoop loop = new LoopbackLoop("test-park", 4, 0);
        Thread thread = threadOf(loop);
        // Wait (bounded) until the thread has parked for want of work, then give it some.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (thread.getState() != Thread.State.WAITING) {
            assertTrue(System.nanoTime() < deadline, "the idle thread never parked: " + thread.getState());
            Thread.onSpinWait();
        }
        CountDownLatch ran = new CountDownLatch(1);
        assertTrue(loop.execute(ran::countDown));
        assertTrue(ran.await(10, TimeUnit.SECONDS), "a parked loop was not woken");
        loop.close(10, TimeUnit.SECONDS);
    }

    @Test
    void aFullQueueMakesOthersWaitAndTheLoopRunItsOwnTaskAtOnce() throws Exception {
        LoopbackLoop loop = new LoopbackLoop("test-full", 4, LONG);
        CountDownLatch blocked = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        List<String> order = Collections.synchronizedList(new ArrayList<>());
        loop.execute(() -> {
            blocked.countDown();
            await(release);
        });
        assertTrue(blocked.await(10, TimeUnit.SECONDS));
        for (int i = 0; i < 4; i++) {
            String name = "queued" + i;
            assertTrue(loop.execute(() -> order.add(name)));
        }
        // This producer finds the queue full: it must wait for room, not drop its task.
        CompletableFuture<Boolean> waiting = CompletableFuture.supplyAsync(() -> loop.execute(() -> order.add("late")));
        release.countDown();
        assertTrue(waiting.get(10, TimeUnit.SECONDS));
        // The loop's own thread, finding its queue full, runs the task itself.
        CountDownLatch inner = new CountDownLatch(1);
        loop.execute(() -> {
            List<String> mine = new ArrayList<>();
            for (int i = 0; i < 6; i++) {
                String name = "inner" + i;
                loop.execute(() -> mine.add(name));
            }
            order.add("ran at once: " + mine);
            inner.countDown();
        });
        assertTrue(inner.await(10, TimeUnit.SECONDS));
        loop.close(10, TimeUnit.SECONDS);
        assertEquals(List.of("queued0", "queued1", "queued2", "queued3", "late", "ran at once: [inner4, inner5]"),
                order.subList(0, 6));
    }

    @Test
    void aCloseRunsWhatWasQueuedAndRefusesTheRest() throws Exception {
        LoopbackLoop loop = new LoopbackLoop("test-close", 16, LONG);
        Thread thread = threadOf(loop);
        CountDownLatch release = new CountDownLatch(1);
        List<Integer> ran = Collections.synchronizedList(new ArrayList<>());
        loop.execute(() -> await(release));
        for (int i = 0; i < 5; i++) {
            int n = i;
            loop.execute(() -> ran.add(n));
        }
        CompletableFuture<Void> closed = CompletableFuture.runAsync(() -> {
            try {
                loop.close(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        release.countDown();
        closed.get(20, TimeUnit.SECONDS);
        assertEquals(List.of(0, 1, 2, 3, 4), ran);
        assertFalse(thread.isAlive());
        assertFalse(loop.execute(() -> ran.add(99)));
        assertEquals(5, ran.size());
    }

    @Test
    void aTaskThatThrowsDoesNotStopTheOthers() throws Exception {
        LoopbackLoop loop = new LoopbackLoop("test-throw", 4, 0);
        loop.execute(() -> {
            throw new IllegalStateException("a task's bug, logged by the loop");
        });
        CountDownLatch after = new CountDownLatch(1);
        loop.execute(after::countDown);
        assertTrue(after.await(10, TimeUnit.SECONDS));
        loop.close(10, TimeUnit.SECONDS);
    }

    @Test
    void aCloseFromTheLoopsOwnThreadDoesNotWaitForItself() throws Exception {
        LoopbackLoop loop = new LoopbackLoop("test-self-close", 4, LONG);
        Thread thread = threadOf(loop);
        CountDownLatch closed = new CountDownLatch(1);
        loop.execute(() -> {
            try {
                loop.close(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
            closed.countDown();
        });
        assertTrue(closed.await(5, TimeUnit.SECONDS));
        thread.join(10_000);
        assertFalse(thread.isAlive());
    }

    @Test
    void aNegativeYieldIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> new LoopbackLoop("test-negative", 4, -1));
    }

    @Test
    void aStackWithABadYieldSettingIsRefusedNamingIt() throws Exception {
        RdsStackConfig config = RdsStackConfig.builder().name("bad-yield").address(InetAddress.getByName("10.9.0.1"))
                .defaultTransport(LoopbackTransport.NAME).property("loopback.yieldMicros", "soon").build();
        try (RdsStack stack = RdsStack.create(config); RdsSocket socket = stack.openSocket()) {
            // The transport starts with the first bind, and refuses to.
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> socket.bind(new InetSocketAddress(InetAddress.getByName("10.9.0.1"), 0)));
            assertTrue(e.getMessage().contains("loopback.yieldMicros"), e.getMessage());
        }
    }

    private static Thread threadOf(LoopbackLoop loop) throws Exception {
        AtomicReference<Thread> ref = new AtomicReference<>();
        CountDownLatch got = new CountDownLatch(1);
        loop.execute(() -> {
            ref.set(Thread.currentThread());
            got.countDown();
        });
        assertTrue(got.await(10, TimeUnit.SECONDS));
        return ref.get();
    }

    private static void await(CountDownLatch latch) {
        try {
            if (!latch.await(30, TimeUnit.SECONDS)) {
                throw new IllegalStateException("never released");
            }
        } catch (InterruptedException e) {
            throw new IllegalStateException(e);
        }
    }
}
