package org.rds4j.core.path;

/**
 * A bound socket as the receive path sees it. The I/O thread claims an arrival, fills it straight from the network
 * buffer, and hands arrivals over in batches: one call, one lock and one wake-up per read, not per message.
 */
public interface MessageReceiver {

    /**
     * Whether the socket closed: nothing more is queued on it.
     *
     * @return true once the socket is closed
     */
    boolean isClosed();

    /**
     * An arrival with room for {@code length} payload bytes (position 0, limit {@code length}). With {@code direct}
     * (a message arriving from a peer), if a reader waits on an empty queue with a buffer posted
     * ({@link PostedBuffer}) and the message is large enough, the payload goes straight into that buffer
     * ({@link Arrival#target()}), and {@link #deliver} of this arrival alone hands it to that reader.
     *
     * @param length the payload size in bytes (h_len)
     * @param room the least capacity of its buffer, so that small messages behind it can join it as a run
     *     ({@link Arrival#runSlot}); 0 for what {@code length} needs. Not with {@code direct}
     * @param direct whether the payload may go into a waiting reader's posted buffer
     * @return an arrival from the socket's pool, or a new one
     */
    Arrival claim(int length, int room, boolean direct);

    /**
     * Gives back an arrival that was claimed and will not be delivered (a duplicate, a drop).
     *
     * @param arrival the arrival from {@link #claim}, which the caller must no longer use
     */
    void abandon(Arrival arrival);

    /**
     * Queues a batch of arrivals, linked through {@link Arrival#next()} from {@code first} to {@code last}, and wakes
     * readers once. If the socket closed, the arrivals are dropped and counted.
     *
     * @param first the first arrival of the batch
     * @param last the last arrival of the batch
     * @param count how many arrivals
     * @param bytes their payload bytes in all
     */
    void deliver(Arrival first, Arrival last, int count, long bytes);

    /**
     * Under caller I/O, before each delivery: the path delivering, which the socket's busy-polling readers poll
     * ({@link ConnectionPath#pollAsReader}) while they wait. On the path's holder.
     *
     * @param path the delivering path
     */
    default void deliveredBy(ConnectionPath path) {
    }
}
