package org.rds4j;

import java.io.Closeable;
import java.io.IOException;
import java.time.Duration;
import java.util.Objects;

/**
 * Waits on many sockets at once with one thread, as {@code poll(2)} does for the kernel's RDS sockets: a server
 * with thousands of sockets needs a handful of threads, not one per socket.
 *
 * <p>Readiness is the kernel's, level-triggered: {@link #OP_READ} while a message or notification is queued,
 * {@link #OP_WRITE} while the send buffer has room. A socket that stays ready is reported again by the next
 * {@link #select}. A closed socket is reported ready for everything registered, so that its next call fails with
 * {@link EbadfException} and the application can drop it.
 *
 * <pre>{@code
 * try (RdsSelector selector = RdsSelector.open(stack)) {
 *     for (RdsSocket s : sockets) {
 *         selector.register(s, RdsSelector.OP_READ);
 *     }
 *     while (running) {
 *         selector.select(Duration.ofSeconds(1), (socket, ops) -> handle(socket.receive()));
 *     }
 * }
 * }</pre>
 *
 * <p>{@link #register}, {@link #wakeup} and {@link #close} may be called from any thread; {@link #select} by one
 * thread at a time.
 */
public interface RdsSelector extends Closeable {
    /** Readable: {@code receive()} would return at once (the kernel's {@code POLLIN}). */
    int OP_READ = 1;
    /** Writable: the send buffer has room (the kernel's {@code POLLOUT}). */
    int OP_WRITE = 4;

    /**
     * Opens a selector for sockets of {@code stack}.
     *
     * @param stack the stack whose sockets the selector will watch
     * @return a new selector
     */
    static RdsSelector open(RdsStack stack) {
        Objects.requireNonNull(stack, "stack is null: pass the RdsStack whose sockets the selector will watch");
        return stack.openSelector();
    }

    /** Called by {@link #select} for each ready socket. */
    @FunctionalInterface
    interface ReadyHandler {
        /**
         * Handles one ready socket.
         *
         * @param socket the socket
         * @param readyOps the registered operations it is ready for ({@link #OP_READ}, {@link #OP_WRITE})
         * @throws IOException the handler's own call on the socket failed; {@link #select} passes it on
         */
        void ready(RdsSocket socket, int readyOps) throws IOException;
    }

    /**
     * Registers {@code socket} for {@code interestOps} ({@link #OP_READ}, {@link #OP_WRITE}, or both), replacing an
     * earlier registration; 0 deregisters it.
     *
     * @param socket a socket of this selector's stack
     * @param interestOps the operations to wait for
     * @throws EinvalException the socket belongs to another stack, or the operations are unknown
     * @throws IOException the registration failed for another reason
     */
    void register(RdsSocket socket, int interestOps) throws IOException;

    /**
     * Waits until at least one registered socket is ready, {@code timeout} passes or {@link #wakeup()} is called,
     * then calls {@code handler} for every ready socket.
     *
     * @param timeout the longest wait
     * @param handler called once for each ready socket, on this thread
     * @return the number of sockets handed to {@code handler}
     * @throws IOException the handler threw it
     */
    int select(Duration timeout, ReadyHandler handler) throws IOException;

    /** Makes a blocked or the next {@link #select} return at once. */
    void wakeup();

    /** Deregisters everything; a blocked {@link #select} returns. */
    @Override
    void close();
}
