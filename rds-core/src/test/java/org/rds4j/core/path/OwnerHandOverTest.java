package org.rds4j.core.path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.rds4j.core.cong.CongestionMap;

/**
 * A task a timer hands to a connection's owner again and again (a path's maintenance, every period) is made ready
 * once: handing it over allocates nothing on the timer's thread, also where application threads may do a path's I/O
 * and every task the owner runs is wrapped in taking the connection.
 */
class OwnerHandOverTest {
    private static final int HAND_OVERS = 10_000;
    /** Bytes the handing thread may allocate in all: a few objects the JIT makes once, nothing per hand-over. */
    private static final long BOUND = 2_000;

    @Test
    void aTaskMadeReadyOnceIsHandedOverWithoutAllocating() throws Exception {
        for (boolean callerIo : new boolean[] {false, true}) {
            long[] queued = new long[1];
            FakeTransport transport = new FakeTransport(task -> queued[0]++);
            transport.callerIo = callerIo;
            Connection c = new Connection(PathHarness.SMALL, PathHarness.LARGE, "fake", transport,
                    new FakeEnvironment(1), new CongestionMap());
            Runnable tick = c.onOwner(() -> { });
            AtomicReference<long[]> bytes = new AtomicReference<>();
            Thread timer = new Thread(() -> bytes.set(handOver(tick)), "test-timer");
            timer.start();
            timer.join(20_000);
            assertTrue(bytes.get() != null, "the hand-overs did not finish");
            assertEquals(3L * HAND_OVERS, queued[0], "tasks queued on the owner");
            long[] b = bytes.get();
            assertTrue(b[1] <= BOUND, (callerIo ? "with" : "without") + " caller I/O, " + HAND_OVERS
                    + " hand-overs allocated " + b[1] + " bytes (a first round, to compile them: " + b[0] + ")");
        }
    }

    /** Hands {@code tick} over in three rounds (the first two warm it up); returns the bytes of the first and last. */
    private static long[] handOver(Runnable tick) {
        com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long id = Thread.currentThread().getId();
        long[] bytes = new long[2];
        for (int round = 0; round < 3; round++) {
            long before = mx.getThreadAllocatedBytes(id);
            for (int i = 0; i < HAND_OVERS; i++) {
                tick.run();
            }
            long used = mx.getThreadAllocatedBytes(id) - before;
            bytes[round == 0 ? 0 : 1] = used;
        }
        return bytes;
    }
}
