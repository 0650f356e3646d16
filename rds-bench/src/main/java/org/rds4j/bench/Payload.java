package org.rds4j.bench;

import java.nio.ByteBuffer;

/**
 * The benchmark's messages: a sequence number in the first 8 bytes and its complement in the last 8 (so a truncated,
 * shifted or stale message is caught without reading every byte, which would make the receiver the bottleneck), a
 * fixed filler in between. The sender stamps one reused buffer per message.
 */
public final class Payload {
    /** The smallest message: room for the sequence number. */
    public static final int MIN_SIZE = 8;

    private Payload() {
    }

    /** A direct buffer of {@code size} bytes with the filler written once. */
    public static ByteBuffer newMessage(int size) {
        ByteBuffer b = ByteBuffer.allocateDirect(size);
        for (int i = 0; i < size; i++) {
            b.put(i, (byte) (i * 31 + 7));
        }
        return b;
    }

    /** Writes {@code sequence} into {@code message} and makes the whole buffer its content. */
    public static void stamp(ByteBuffer message, long sequence) {
        message.clear();
        message.putLong(0, sequence);
        if (message.capacity() >= 2 * Long.BYTES) {
            message.putLong(message.capacity() - Long.BYTES, ~sequence);
        }
    }

    /**
     * Checks a received message (position 0, limit its length) of {@code length} bytes against the expected size and
     * sequence number.
     *
     * @throws MismatchException with the details, on any difference
     */
    public static void check(ByteBuffer received, int length, int expectedSize, long expectedSequence)
            throws MismatchException {
        if (length != expectedSize) {
            throw new MismatchException("message " + expectedSequence + ": expected " + expectedSize + " bytes, got "
                    + length);
        }
        long seq = received.getLong(0);
        if (seq != expectedSequence) {
            throw new MismatchException("expected message " + expectedSequence + ", got message " + seq);
        }
        if (length >= 2 * Long.BYTES && received.getLong(length - Long.BYTES) != ~expectedSequence) {
            throw new MismatchException("message " + expectedSequence + ": its last 8 bytes are corrupt");
        }
    }

    /** A received message is not the one expected: the cell fails. */
    public static final class MismatchException extends java.io.IOException {
        private static final long serialVersionUID = 1L;

        public MismatchException(String message) {
            super(message);
        }
    }
}
