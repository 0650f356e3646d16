package org.rds4j.transport.loopback;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.jetbrains.lincheck.Lincheck;
import org.junit.jupiter.api.Test;

/**
 * The loopback loop's sleep and wake-up ({@link ParkingQueue}), model-checked by Lincheck at every shared read and
 * write, park and unpark: two producers queue a task each while the taker takes, and sleeps whenever it finds
 * nothing. In every interleaving the taker gets both tasks; a lost wake-up shows as a taker that never returns, which
 * Lincheck reports as a hang with its interleaving. Lincheck lets {@code LockSupport.park} return spuriously at any
 * point, after which the taker looks again and finds the task a lost wake-up left behind; so the queue sleeps here on
 * {@link Sleep}, a permit under a monitor that only a wake-up gives, and the protocol under test (the flag, the
 * fences, the last look, queue-then-read) is the production code's.
 */
class ParkingQueueLincheckTest {
    private static final int INVOCATIONS = 200;
    private static final int TASKS = 2;

    /** LockSupport's permit without spurious returns: at most one wake-up kept, taken by the next sleep. */
    private static final class Sleep extends ParkingQueue {
        private boolean permit;

        Sleep(Thread taker) {
            super(4, taker);
        }

        @Override
        synchronized void sleep() {
            try {
                while (!permit) {
                    wait();
                }
            } catch (InterruptedException e) {
                throw new AssertionError("nobody interrupts the taker", e);
            }
            permit = false;
        }

        @Override
        synchronized void wakeTaker() {
            permit = true;
            notifyAll();
        }
    }

    @Test
    void aSleepingTakerIsWokenForEveryTask() {
        Lincheck.runConcurrentTest(INVOCATIONS, () -> {
            int[] ran = new int[1];
            Throwable[] failure = new Throwable[1];
            ParkingQueue[] queue = new ParkingQueue[1];
            Thread taker = new Thread(() -> {
                try {
                    int taken = 0;
                    // Bounded: each task costs at most a look and a sleep, and a kept wake-up a further look.
                    for (int i = 0; i < 20 && taken < TASKS; i++) {
                        Runnable task = queue[0].poll();
                        if (task == null) {
                            task = queue[0].parkUnlessQueued();
                        }
                        if (task != null) {
                            task.run();
                            taken++;
                        }
                    }
                } catch (Throwable t) {
                    failure[0] = t;
                }
            });
            queue[0] = new Sleep(taker);
            taker.start();
            Thread[] producers = new Thread[TASKS];
            for (int p = 0; p < TASKS; p++) {
                producers[p] = new Thread(() -> assertTrue(queue[0].offer(() -> ran[0]++), "room for the task"));
                producers[p].start();
            }
            try {
                for (Thread t : producers) {
                    t.join();
                }
                taker.join();
            } catch (InterruptedException e) {
                throw new AssertionError("nobody interrupts these threads", e);
            }
            if (failure[0] != null) {
                throw new AssertionError(failure[0]);
            }
            assertEquals(TASKS, ran[0], "tasks the taker ran");
        });
    }
}
