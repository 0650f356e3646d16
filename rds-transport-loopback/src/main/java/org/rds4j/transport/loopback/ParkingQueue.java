package org.rds4j.transport.loopback;

import java.lang.invoke.VarHandle;
import java.util.concurrent.locks.LockSupport;
import org.rds4j.core.util.BoundedPool;

/**
 * A {@link LoopbackLoop}'s tasks: any thread queues, one thread takes, and the taker may sleep when there is nothing
 * to take. Producers queue with one compare-and-set on a bounded array ({@link BoundedPool}, whose slots are taken in
 * the order they were filled), the taker takes without a lock, and a producer unparks the taker only when it has
 * gone to sleep.
 *
 * <p>Sleeping and waking follow the usual flag protocol: the taker raises {@code parked}, looks once more, and only
 * then parks; a producer queues, then reads the flag. A full fence on each side between the write and the read means
 * one of them always sees the other's, so a task is never left queued behind a sleeping taker.
 *
 * <p>The sleep itself is {@link #sleep} and {@link #wakeTaker}, {@code LockSupport}'s park and unpark; a test
 * replaces them with a sleep that never wakes by itself, under which a lost wake-up is a taker that never returns
 * (park may return spuriously, which would hide one). Only this class is loaded outside tests, so the calls inline.
 */
class ParkingQueue {
    private final BoundedPool<Runnable> tasks;
    private final Thread taker;
    private volatile boolean parked;

    /**
     * @param capacity how many tasks may be queued at once (rounded up to a power of two)
     * @param taker the one thread that takes, and may park
     */
    ParkingQueue(int capacity, Thread taker) {
        this.tasks = new BoundedPool<>(capacity, () -> null);
        this.taker = taker;
    }

    /**
     * Queues a task and wakes the taker if it sleeps. Any thread.
     *
     * @return {@code false} if the queue is full and nothing was queued
     */
    boolean offer(Runnable task) {
        if (!tasks.offer(task)) {
            return false;
        }
        VarHandle.fullFence();                           // our queued task before our read of the flag
        if (parked) {
            wakeTaker();
        }
        return true;
    }

    /** The taker's next task, {@code null} if none is queued. The taker only. */
    Runnable poll() {
        return tasks.poll();
    }

    /**
     * Sleeps until a producer wakes the taker, unless a task came in the meantime. The taker only. It may also
     * return after a spurious wake-up, an interrupt (cleared: a wake-up here, never an end) or {@link #wake}.
     *
     * @return the task found on the last look before sleeping, or {@code null} after waking: look again
     */
    Runnable parkUnlessQueued() {
        parked = true;
        VarHandle.fullFence();                           // our flag before our last look
        Runnable task = tasks.poll();
        if (task != null) {
            parked = false;
            return task;
        }
        sleep();
        parked = false;
        Thread.interrupted();
        return null;
    }

    /** Wakes the taker, whether it sleeps or not: to drain a full queue, or to see a close. Any thread. */
    void wake() {
        wakeTaker();
    }

    /** The taker sleeps until {@link #wakeTaker}, or not at all if woken since it last slept; may return early. */
    void sleep() {
        LockSupport.park(this);
    }

    /** Ends the taker's sleep, or its next one if it is awake. */
    void wakeTaker() {
        LockSupport.unpark(taker);
    }
}
