package org.rds4j.transport.loopback;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.rds4j.RdsSocket;
import org.rds4j.RdsStack;
import org.rds4j.RdsStackConfig;

/** {@link YieldingTaskQueue}: a waiting take gets what is offered, in order, whether it is yielding or parked. */
@Timeout(60)
class YieldingTaskQueueTest {
    private static final long LONG = 60_000_000_000L;       // 60 s: longer than any test here

    @ParameterizedTest(name = "yield {0} ns")
    @ValueSource(longs = {0, 50_000, LONG})
    void aWaitingTakeGetsWhatIsOffered(long yieldNanos) throws Exception {
        YieldingTaskQueue q = new YieldingTaskQueue(4, yieldNanos);
        Runnable first = () -> { };
        Runnable second = () -> { };
        CountDownLatch taking = new CountDownLatch(1);
        CompletableFuture<Runnable[]> taken = CompletableFuture.supplyAsync(() -> {
            try {
                taking.countDown();
                return new Runnable[] {q.take(), q.take()};
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        assertTrue(taking.await(10, TimeUnit.SECONDS));
        assertTrue(q.offer(first));
        assertTrue(q.offer(second));
        Runnable[] got = taken.get(10, TimeUnit.SECONDS);
        assertSame(first, got[0]);
        assertSame(second, got[1]);
    }

    @Test
    void aQueuedTaskIsTakenAtOnce() throws Exception {
        YieldingTaskQueue q = new YieldingTaskQueue(4, LONG);
        Runnable r = () -> { };
        q.offer(r);
        assertSame(r, q.take());
        assertEquals(0, q.size());
    }

    @ParameterizedTest(name = "yield {0} ns")
    @ValueSource(longs = {0, LONG})
    void anInterruptEndsTheWait(long yieldNanos) throws Exception {
        YieldingTaskQueue q = new YieldingTaskQueue(4, yieldNanos);
        CompletableFuture<Throwable> outcome = new CompletableFuture<>();
        Thread t = new Thread(() -> {
            try {
                q.take();
                outcome.complete(null);
            } catch (Throwable e) {
                outcome.complete(e);
            }
        });
        t.start();
        t.interrupt();
        assertTrue(outcome.get(10, TimeUnit.SECONDS) instanceof InterruptedException);
        t.join(10_000);
    }

    @Test
    void aNegativeYieldIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> new YieldingTaskQueue(4, -1));
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
}
