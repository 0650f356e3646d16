package org.rds4j.core.util;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayDeque;
import java.util.concurrent.atomic.AtomicInteger;
import org.jetbrains.lincheck.Lincheck;
import org.junit.jupiter.api.Test;

/**
 * {@link CoalescingTask}, the flag behind the transports' transmit passes (TcpConnection, LoopbackEndpoint), the
 * loopback's delivery and a path's kick, model-checked by Lincheck at every shared read, write and compare-and-set:
 * askers publish something, then request a run; the owner runs what is queued, in the order it was queued, while they
 * ask and after they are done. In every interleaving the last run sees everything asked for (no request lost), no
 * request is left standing with nothing queued for it, and a run is queued only when none is waiting.
 */
class CoalescingTaskLincheckTest {
    private static final int INVOCATIONS = 200;
    private static final int ASKERS = 2;
    private static final int ASKS_EACH = 2;

    /** The owner's queue, an event loop's: tasks run one at a time, in the order queued. */
    private static final class Owner {
        private final ArrayDeque<Runnable> queue = new ArrayDeque<>();
        /** Whether a second queued run is a failure: it is unless the owner takes requests early. */
        private final boolean oneAtATime;

        Owner(boolean oneAtATime) {
            this.oneAtATime = oneAtATime;
        }

        synchronized void execute(Runnable task) {
            if (oneAtATime) {
                assertTrue(queue.isEmpty(), "a second run queued while one waits");
            }
            queue.add(task);
        }

        synchronized Runnable poll() {
            return queue.poll();
        }

        /** Runs what is queued now and what those runs queue, a bounded number of them. */
        void drain() {
            for (int i = 0; i < 10; i++) {
                Runnable r = poll();
                if (r == null) {
                    return;
                }
                r.run();
            }
            throw new AssertionError("runs kept queuing runs");
        }
    }

    /** One invocation's state: askers publish a count before each request; a run notes the count it sees. */
    private static final class Fixture {
        final AtomicInteger asked = new AtomicInteger();
        /** What the latest run saw; the owner's. */
        int seen;
        final Owner owner;
        final CoalescingTask task = new CoalescingTask(this::look);

        Fixture(boolean oneAtATime) {
            owner = new Owner(oneAtATime);
        }

        void look() {
            seen = asked.get();
        }

        void ask() {
            for (int i = 0; i < ASKS_EACH; i++) {
                asked.incrementAndGet();
                if (task.request()) {
                    owner.execute(task);
                }
            }
        }

        void check() {
            owner.drain();
            assertEquals(ASKERS * ASKS_EACH, seen, "a request no run saw");
            assertFalse(task.takeRequest(), "a request left standing with no run queued for it");
        }
    }

    @Test
    void theLastRunSeesEveryRequest() {
        Lincheck.runConcurrentTest(INVOCATIONS, () -> {
            Fixture f = new Fixture(true);
            ConcurrentRun.all(f::ask, f::ask, () -> {
                for (int i = 0; i < 3; i++) {           // the owner runs what is queued as it comes
                    Runnable r = f.owner.poll();
                    if (r != null) {
                        r.run();
                    }
                }
            });
            f.check();
        });
    }

    /**
     * The owner takes the request early and does the work itself (the loopback's delivery takes a transmit between
     * two segments): the queued run then does nothing, and a request after the early take still gets a run.
     */
    @Test
    void anEarlyTakeLosesNoRequest() {
        Lincheck.runConcurrentTest(INVOCATIONS, () -> {
            Fixture f = new Fixture(false);
            ConcurrentRun.all(f::ask, f::ask, () -> {
                for (int i = 0; i < 2; i++) {
                    if (f.task.takeRequest()) {         // early, between two pieces of other work
                        f.look();
                    }
                    Runnable r = f.owner.poll();
                    if (r != null) {
                        r.run();
                    }
                }
            });
            f.check();
        });
    }
}
