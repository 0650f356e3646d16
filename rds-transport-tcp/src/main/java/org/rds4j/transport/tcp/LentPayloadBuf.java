package org.rds4j.transport.tcp;

import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.buffer.UnpooledUnsafeDirectByteBuf;
import java.nio.ByteBuffer;
import org.rds4j.core.spi.PayloadLoan;

/**
 * A message's payload written from the core's own direct buffer, borrowed for as long as Netty holds the write
 * ({@link PayloadLoan}), instead of copied into a batch. Being a buffer, it leaves in the same gathering
 * {@code writev(2)} as the batch holding its header: written on its own (as a {@code FileRegion}, tried first) the
 * header left in a 48-byte segment of its own, and the receiving side woke and read twice per message.
 *
 * <p>One wrapper per payload buffer, made by the first borrower and kept with the buffer
 * ({@link PayloadLoan#attach}), so lending allocates nothing in steady state. Each loan starts it again with one
 * reference, the write's; when Netty releases it (written, or failed with its channel), the payload is given back
 * and the memory, which is the core's, is left alone.
 */
final class LentPayloadBuf extends UnpooledUnsafeDirectByteBuf {
    private PayloadLoan loan;

    private LentPayloadBuf(ByteBuffer memory) {
        super(UnpooledByteBufAllocator.DEFAULT, memory, memory.capacity());
    }

    /**
     * The borrowed payload's bytes from {@code start}, {@code length} of them, as a buffer to write; the caller has
     * borrowed {@code loan}.
     *
     * @return a buffer with one reference, which the write takes over
     */
    static LentPayloadBuf lend(PayloadLoan loan, int start, int length) {
        LentPayloadBuf b = loan.attachment() instanceof LentPayloadBuf kept ? kept : null;
        if (b == null) {
            b = new LentPayloadBuf(loan.memory().clear());
            loan.attach(b);
        } else {
            b.resetRefCnt();
        }
        b.loan = loan;
        b.setIndex(start, start + length);
        return b;
    }

    /** Gives the payload back instead of freeing memory that is not ours; the wrapper waits for the next loan. */
    @Override
    protected void deallocate() {
        PayloadLoan l = loan;
        loan = null;
        l.giveBack();
    }
}
