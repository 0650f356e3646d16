package org.rds4j.core.util;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * Work that any thread may ask an owner thread to do, queued once for many requests: a transport's transmit pass, a
 * path's kick. Many requests before the owner gets to it make one run, and no request is lost: the run takes the
 * request ({@link #takeRequest}, which lowers the flag) before it looks at anything, so a request made after that look
 * raises the flag again and queues another run. One run is queued at a time unless the owner takes a request early.
 *
 * <p>Cost for the asker: one volatile read when a run is already asked for (the common case under load), else one
 * compare-and-set and whatever the owner's queue costs. Nothing is allocated: the task queued is this object.
 *
 * <p>Use: {@code if (task.request()) ownerExecutor.execute(task);} and, if the executor refuses it, {@link #withdraw}
 * unless nothing is to run any more. The owner may also take the request early ({@link #takeRequest}) and do the work
 * at once; the queued run then finds no request and does nothing.
 */
public final class CoalescingTask implements Runnable {
    private static final VarHandle PENDING;

    static {
        try {
            PENDING = MethodHandles.lookup().findVarHandle(CoalescingTask.class, "pending", boolean.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final Runnable work;
    /** A run is asked for and queued (or about to be) on the owner, and has not taken the request yet. */
    private volatile boolean pending;

    /**
     * @param work what a run does, on the owner's thread
     */
    public CoalescingTask(Runnable work) {
        this.work = work;
    }

    /**
     * Asks for a run. Any thread.
     *
     * @return {@code true} if the caller must queue this task on the owner: no run was asked for yet
     */
    public boolean request() {
        return !pending && PENDING.compareAndSet(this, false, true);
    }

    /**
     * Takes the standing request, if any: the caller then does the work, and a later {@link #request} queues another
     * run. On the owner.
     *
     * @return whether a request stood
     */
    public boolean takeRequest() {
        return pending && (boolean) PENDING.getAndSet(this, false);
    }

    /** The owner's executor refused the task {@link #request} told the caller to queue: a later request may try. */
    public void withdraw() {
        pending = false;
    }

    /** The queued run, on the owner: the work, if a request still stands. */
    @Override
    public void run() {
        if (takeRequest()) {
            work.run();
        }
    }
}
