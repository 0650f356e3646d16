package org.rds4j.core.spi;

import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;

/**
 * The transport thread that owns everything the core keeps about one peer: the state of every path of the
 * connection between a local address and a peer address (numbering, queues, acknowledgements, reconnection). The
 * transport calls every {@link ConnectionHandler} method of those connections on this thread, and the core runs its
 * own work for them here too, as tasks: timers, the slow paths of application threads (connecting a path that is
 * down, cancelling, closing a socket) and inspection. So that state needs no lock: whoever is not this thread asks
 * it. See docs/threading.md.
 */
public interface IoThread extends Executor {
    /**
     * Whether the calling thread is this one.
     *
     * @return true on the owning thread
     */
    boolean inThread();

    /**
     * Queues {@code task} to run on this thread, after the tasks queued before it.
     *
     * @param task what to run
     * @throws RejectedExecutionException the transport is closed and the task will not run
     */
    @Override
    void execute(Runnable task);
}
