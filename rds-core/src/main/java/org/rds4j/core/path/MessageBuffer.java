package org.rds4j.core.path;

import java.nio.ByteBuffer;
import org.rds4j.core.spi.PayloadLoan;

/**
 * A pooled message's own payload buffer. From {@value #DIRECT_MIN} bytes it is direct memory, which a transport
 * writing to an operating-system socket can hand to the kernel as it is, so the core lends it
 * ({@link PayloadLoan}) instead of having it copied into the transport's batches: at 1 MiB that copy took 12 % of the
 * sending TCP I/O thread's CPU (docs/decisions/0005-large-payloads-lent-to-the-write.md). Smaller payloads stay on the heap: copied into a batch
 * with the frames around them, they leave in one piece of a gathering write instead of three.
 *
 * <p>The sending thread fills it, and only when it is not out on loan ({@link OutgoingMessage#fill} takes a new
 * buffer otherwise); the borrower reads it between {@link #borrow()} and {@link #giveBack()}.
 */
final class MessageBuffer extends Loan {
    /** The smallest capacity kept in direct memory: a whole transport batch's worth (32 KiB). */
    static final int DIRECT_MIN = 32 * 1024;

    final ByteBuffer bytes;

    MessageBuffer(int capacity) {
        this.bytes = capacity >= DIRECT_MIN ? ByteBuffer.allocateDirect(capacity) : ByteBuffer.allocate(capacity);
    }

    /** Whether a transport may borrow it: direct memory only. */
    boolean lendable() {
        return bytes.isDirect();
    }

    @Override
    ByteBuffer lentBuffer() {
        return bytes;
    }

    @Override
    public void giveBack() {
        endLoan();
    }
}
