package org.rds4j.bench;

import java.io.IOException;
import java.util.Map;

/**
 * A connected pair of endpoints, as two hosts would hold them: {@link #a()} plays the sender (and the pinger),
 * {@link #b()} the receiver (and the echoer).
 *
 * <p>A link may hold several such pairs between the same two hosts ({@link #pairs()}), for instance eight rds4j
 * sockets on each host: the harness then drives each pair with its own sender and receiver thread and sums them.
 */
public interface Link extends AutoCloseable {
    Endpoint a();

    Endpoint b();

    /** How many endpoint pairs the link holds; each is driven by a sender and a receiver thread of its own. */
    default int pairs() {
        return 1;
    }

    /** Pair {@code pair}'s sending end ({@code 0 <= pair < pairs()}); pair 0 is {@link #a()}. */
    default Endpoint a(int pair) {
        if (pair != 0) {
            throw new IndexOutOfBoundsException("pair " + pair + " of a link with " + pairs() + " pair(s)");
        }
        return a();
    }

    /** Pair {@code pair}'s receiving end; pair 0 is {@link #b()}. */
    default Endpoint b(int pair) {
        if (pair != 0) {
            throw new IndexOutOfBoundsException("pair " + pair + " of a link with " + pairs() + " pair(s)");
        }
        return b();
    }

    /**
     * The name prefix of the threads this link runs for one side, as a host's own threads (an rds4j stack's I/O, loop
     * and timer threads, a Netty event loop), which {@code --pin} places on that side's core with the side's harness
     * threads; only its first 15 characters count (the kernel keeps no more of a thread's name). {@code null} if the
     * link runs no thread of its own for that side, or none that belongs to one side (Aeron's shared media driver).
     *
     * @param sideA true for {@link #a()}'s side, false for {@link #b()}'s
     * @return the prefix, or {@code null}
     */
    default String threadPrefix(boolean sideA) {
        return null;
    }

    /**
     * One side's own event counters, as the contender keeps them (an rds4j stack's {@code RdsStack.counters()}: the
     * kernel's {@code rds-info -c} names and rds4j's own), which {@code --threads} shows for the throughput phase.
     * Empty for a contender without any.
     *
     * @param sideA true for {@link #a()}'s side, false for {@link #b()}'s
     * @return a snapshot, name to count
     */
    default Map<String, Long> counters(boolean sideA) {
        return Map.of();
    }

    /**
     * Called once the cell's phases are done, before {@link #close()}: checks that the link carried the messages the
     * way its contender's description says (for instance over several paths), and throws to fail the cell if not.
     */
    default void verify() throws IOException {
    }

    /**
     * Releases every socket, thread and buffer of the link, and makes every blocked {@link Endpoint} call return or
     * throw. Idempotent; may be called from any thread while the endpoints are in use.
     */
    @Override
    void close();
}
