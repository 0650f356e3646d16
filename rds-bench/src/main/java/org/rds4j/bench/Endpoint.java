package org.rds4j.bench;

import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * One end of a {@link Link}: sends messages to the other end and receives the messages the other end sends. This is
 * the whole surface the harness needs from a messaging library, so that adding a contender means writing one
 * endpoint and one {@link Contender}, and nothing in the measuring code changes.
 *
 * <p>An endpoint is used by one harness thread at a time. Every blocking call must return, or throw, once the link is
 * closed: that is how the harness bounds a phase that hangs.
 */
public interface Endpoint {

    /**
     * Sends the remaining bytes of {@code message} as one message and advances its position to its limit. May keep the
     * message in a local buffer until {@link #flush()} (the packed NIO contender does); may block for flow control.
     */
    void send(ByteBuffer message) throws IOException;

    /** Pushes out whatever {@link #send} kept back. Most contenders send at once and need nothing here. */
    default void flush() throws IOException {
    }

    /**
     * Receives the next message into {@code dst} (from position 0; what was there is overwritten), leaves {@code dst}
     * ready to read it (position 0, limit the message's length) and returns the length.
     *
     * @throws IOException also when the message does not fit in {@code dst}: a truncated message is a failed cell
     */
    int receive(ByteBuffer dst) throws IOException;
}
