package org.rds4j.core.spi;

/**
 * Why a thread polls a connection's socket in its own context under caller I/O
 * ({@link TransportInstance#callerIo()}, {@link TransportConnection#readInCaller}).
 */
public enum CallerPoll {
    /**
     * A busy-polling receive whose socket this path delivered to last, a busy-polling send waiting for budget on this
     * path, or under tcp.callerIo a receive yielding for a reply. The first such poll hands the path's reading to
     * callers: the transport stops reading it on its I/O thread first, so no byte is read by two threads.
     */
    READER,
    /**
     * Under tcp.callerIo, a blocking send yielding for budget: reads the acknowledgements only if callers read the
     * path already.
     */
    BUDGET,
    /**
     * The path's maintenance turn, on the I/O thread holding the connection: if no reader polled since the last turn,
     * reading goes back to the I/O thread; otherwise it reads what is there, as a reader would.
     */
    MAINTENANCE,
    /** A socket the path delivered to now gets its messages from another path: reading goes back to the I/O thread. */
    RELEASE
}
