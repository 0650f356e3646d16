package org.rds4j.core.spi;

import java.nio.ByteBuffer;

/**
 * Memory the core wants the next bytes of a connection's stream read straight into
 * ({@link ConnectionHandler#readTarget()}): the rest of the payload of the message being received, in a direct
 * buffer that is either a waiting reader's own or the message's pooled buffer. Reading there spares the copy out of
 * the transport's read buffer.
 *
 * <p>The transport may keep one object of its own with the memory ({@link #attach}), such as a wrapper it reads
 * through, and find it again the next time the same memory is the target, so that reading in place allocates nothing
 * in steady state (as {@link PayloadLoan#attach} on the sending side).
 */
public interface ReadTarget {
    /**
     * The buffer to read into, from its position on. The transport changes neither its position nor its limit.
     *
     * @return a direct buffer
     */
    ByteBuffer memory();

    /**
     * The most bytes to read: those of the payload still to come.
     *
     * @return a positive byte count, no more than fits in {@link #memory()} from its position
     */
    int bytes();

    /**
     * What the transport last attached to this memory.
     *
     * @return its object, or {@code null} if it attached none to this memory
     */
    Object attachment();

    /**
     * Keeps {@code attachment} with this memory for the transport, replacing what it attached before.
     *
     * @param attachment the transport's object
     */
    void attach(Object attachment);
}
