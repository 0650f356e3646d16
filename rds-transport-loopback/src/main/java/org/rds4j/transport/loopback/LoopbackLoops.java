package org.rds4j.transport.loopback;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The loops the loopback stacks of this JVM share: one per idle setting ({@code loopback.yieldMicros}), made for the
 * first stack that needs it and ended when the last stack using it closes.
 *
 * <p>Why stacks share a thread: a loopback message passes the sender's stack's thread (its transmit pass, which frames
 * it into a chunk) and the receiver's (which decodes and delivers it). On two threads each hand-off costs a wake-up or
 * a yield and the receiving thread's first touch of bytes the other core wrote; on one, the decode reads what the pass
 * just wrote, still in that core's cache, and a 64-byte round trip crosses two threads instead of four, as Aeron's IPC
 * does (docs/decisions/0043-loopback-stacks-share-one-loop.md). What is lost is parallelism between stacks: a stack
 * that must not share its thread sets {@code loopback.sharedLoop=false}.
 */
final class LoopbackLoops {
    /** The loops in use by idle setting; guarded by the class. */
    private static final Map<Long, LoopbackLoop> LOOPS = new HashMap<>();
    /** The stacks using each loop; guarded by the class. */
    private static final Map<LoopbackLoop, Integer> USERS = new HashMap<>();

    private LoopbackLoops() {
    }

    /**
     * The shared loop for {@code yieldNanos}, started if no stack uses one; every call is matched by a
     * {@link #release}.
     *
     * @param yieldNanos how long the idle thread yields before it parks
     * @param capacity the task queue's size, for a loop made now
     * @return the loop
     */
    static synchronized LoopbackLoop acquire(long yieldNanos, int capacity) {
        LoopbackLoop loop = LOOPS.get(yieldNanos);
        if (loop == null) {
            loop = new LoopbackLoop(threadName(yieldNanos), capacity, yieldNanos);
            LOOPS.put(yieldNanos, loop);
        }
        USERS.merge(loop, 1, Integer::sum);
        return loop;
    }

    /**
     * A stack is done with {@code loop}: the last one closes it, waiting at most {@code timeout} for its queue to
     * drain (not at all from the loop's own thread). A stack that comes later gets a new loop.
     */
    static void release(LoopbackLoop loop, long timeout, TimeUnit unit) throws InterruptedException {
        synchronized (LoopbackLoops.class) {
            int left = USERS.merge(loop, -1, Integer::sum);
            if (left > 0) {
                return;
            }
            USERS.remove(loop);
            LOOPS.values().remove(loop);
        }
        loop.close(timeout, unit);
    }

    /** {@code rds4j-loopback}, with the idle setting if it is not the default. */
    private static String threadName(long yieldNanos) {
        long micros = yieldNanos / 1_000L;
        return micros == LoopbackInstance.DEFAULT_YIELD_MICROS ? "rds4j-loopback"
                : "rds4j-loopback-yield" + micros + "us";
    }
}
