package org.rds4j.transport.loopback;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A loopback transport thread and the queue of tasks it runs, in the order they were queued: shared by the stacks
 * of the JVM ({@link LoopbackLoops}), or one stack's own ({@code loopback.sharedLoop=false}).
 *
 * <p>Why not a {@code ThreadPoolExecutor}: its queue takes a lock for every task on both sides and allocates a lock
 * node whenever either side has to wait (a producer meeting another on the lock, the thread parking for work), which
 * at 64 KiB messages came to most of what the loopback transport allocated in steady state. Here the queue is a
 * {@link ParkingQueue}: one compare-and-set to queue, no lock to take, an unpark only for a thread that sleeps.
 *
 * <p>Idle: for {@code yieldNanos} after its last task the thread keeps looking, yielding the core between looks (a
 * task that comes within that time costs no wake-up; a yielding thread lets every thread with work run first), then
 * parks ({@link ParkingQueue#parkUnlessQueued}, whose flag protocol never leaves a task queued behind a sleeping
 * thread).
 */
final class LoopbackLoop {
    private static final Logger LOG = LoggerFactory.getLogger(LoopbackLoop.class);

    private final ParkingQueue tasks;
    private final long yieldNanos;
    private final Thread thread;
    /** No task is taken any more; the thread runs what is queued and ends. */
    private volatile boolean closing;
    /** The thread ends at its next look (the close waited too long for the queue to drain). */
    private volatile boolean abandoned;
    /**
     * Stream bytes the thread has moved, written into chunks and read out of them, for every stack it serves: how much
     * memory it has touched lately, which is what pushes a chunk it read out of its core's caches
     * ({@link LoopbackEndpoint#grows}). The thread adds (a release store: no fence on the hot path); any thread reads.
     */
    private final AtomicLong moved = new AtomicLong();

    /**
     * A loop whose thread starts at once.
     *
     * @param name the thread's name
     * @param capacity how many tasks may be queued at once (rounded up to a power of two)
     * @param yieldNanos how long an idle thread yields before it parks; 0 parks at once
     */
    LoopbackLoop(String name, int capacity, long yieldNanos) {
        if (yieldNanos < 0) {
            throw new IllegalArgumentException("yieldNanos must be at least 0, was " + yieldNanos);
        }
        this.yieldNanos = yieldNanos;
        this.thread = new Thread(this::run, name);
        this.tasks = new ParkingQueue(capacity, thread);
        thread.setDaemon(true);
        thread.start();
    }

    /** The loop's thread moved {@code bytes} of some end's stream; on that thread. */
    void moved(int bytes) {
        moved.setRelease(moved.getPlain() + bytes);
    }

    /** Stream bytes the loop's thread has moved so far; any thread. */
    long moved() {
        return moved.getAcquire();
    }

    /** Whether the calling thread is this loop's. */
    boolean inLoop() {
        return Thread.currentThread() == thread;
    }

    /**
     * Queues a task. When the queue is full, the loop's own thread runs the task at once (it must not wait for
     * itself) and any other thread waits, yielding, until there is room.
     *
     * @param task what to run on the loop's thread
     * @return {@code false} if the loop is closed and the task will not run; a task queued while the loop closes
     *     runs if the thread has not ended yet
     */
    boolean execute(Runnable task) {
        if (closing) {
            return false;
        }
        while (!tasks.offer(task)) {
            if (closing) {
                return false;
            }
            if (inLoop()) {
                runSafely(task);
                return true;
            }
            tasks.wake();                                // a full queue is drained by a thread that is awake
            Thread.yield();
        }
        return true;
    }

    private void run() {
        long idleSince = 0;                              // 0: we just did work
        while (!abandoned) {
            Runnable task = tasks.poll();
            if (task != null) {
                runSafely(task);
                idleSince = 0;
                continue;
            }
            if (closing) {
                return;                                  // drained
            }
            long now = System.nanoTime();
            if (idleSince == 0) {
                idleSince = now;
            }
            if (now - idleSince < yieldNanos) {
                Thread.yield();
                continue;
            }
            task = tasks.parkUnlessQueued();
            if (task != null) {
                runSafely(task);
                idleSince = 0;
            }
        }
    }

    private static void runSafely(Runnable task) {
        try {
            task.run();
        } catch (RuntimeException | Error e) {
            // A task that throws is a bug in it; the thread carries on with the others, as a thread pool would
            // start a new thread for them.
            LOG.error("a loopback transport task failed", e);
        }
    }

    /**
     * Takes no more tasks, lets the thread run those already queued and waits for it to end, at most {@code timeout}.
     * After that the thread ends at its next look and what is still queued never runs.
     *
     * @param timeout how long to wait for the queue to drain
     * @param unit its unit
     * @throws InterruptedException if interrupted while waiting; the thread is then told to end at once
     */
    void close(long timeout, TimeUnit unit) throws InterruptedException {
        closing = true;
        tasks.wake();
        if (inLoop()) {
            return;                                      // it ends when the task that closes it returns
        }
        try {
            thread.join(Math.max(1, unit.toMillis(timeout)));
        } finally {
            if (thread.isAlive()) {
                abandoned = true;
                tasks.wake();
            }
        }
    }
}
