package org.rds4j.transport.tcp;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.AdaptiveRecvByteBufAllocator;
import io.netty.channel.ChannelConfig;
import io.netty.channel.RecvByteBufAllocator;
import io.netty.util.UncheckedBooleanSupplier;

/**
 * How one of rds4j's channels reads: Netty's adaptive allocator decides how often to read (up to 16 reads per
 * readiness, as Netty's socket channels do by default), but every read goes into one of the I/O thread's {@linkplain
 * BufferRecycler#readBuffers() recycled 256 KiB buffers} instead of a newly allocated one, or, for the rest of a large
 * message's payload, straight into the core's direct buffer for it: a waiting reader's own, or the message's pooled one
 * ({@link TcpConnection#inPlaceReadBuffer()}). The connection releases each recycled buffer once the core has decoded
 * it (the core copies what it keeps), so on a plain connection every read of a thread reuses the same buffer; TLS,
 * whose decoder may keep read bytes across reads, holds a buffer longer, and the recycler then allocates.
 *
 * <p>Reading into 256 KiB whatever the adaptive guess costs nothing here, since the buffer is not allocated per read,
 * and lets a busy connection take up to 256 KiB per system call from the first read on.
 *
 * <p>One per channel (it knows the channel's connection); its handle is used on the channel's event loop only.
 */
final class RecyclingRecvByteBufAllocator implements RecvByteBufAllocator {
    /** As Netty's socket channels read by default: up to 16 reads per readiness. */
    static final int MAX_READS_PER_READINESS = 16;

    private final AdaptiveRecvByteBufAllocator pacing =
            (AdaptiveRecvByteBufAllocator) new AdaptiveRecvByteBufAllocator().maxMessagesPerRead(MAX_READS_PER_READINESS);
    /** The plain connection whose core may take reads in place; {@code null} with TLS (reads are ciphertext). */
    private TcpConnection inPlace;

    /** Lets reads go where {@code c}'s core asks ({@link TcpConnection#inPlaceReadBuffer()}); before any read. */
    void readInPlaceFor(TcpConnection c) {
        inPlace = c;
    }

    @Override
    public Handle newHandle() {
        return new RecyclingHandle((ExtendedHandle) pacing.newHandle());
    }

    /** Netty's adaptive handle for everything but where the bytes go. */
    private final class RecyclingHandle implements ExtendedHandle {
        private final ExtendedHandle pacing;

        RecyclingHandle(ExtendedHandle pacing) {
            this.pacing = pacing;
        }

        @Override
        public ByteBuf allocate(ByteBufAllocator alloc) {
            TcpConnection c = inPlace;
            if (c != null) {
                c.loopReadBegins();
            }
            ByteBuf b = c != null ? c.inPlaceReadBuffer() : null;
            return b != null ? b : BufferRecycler.readBuffers().take(alloc);
        }

        @Override
        public int guess() {
            return BufferRecycler.READ_SIZE;
        }

        @Override
        public void reset(ChannelConfig config) {
            pacing.reset(config);
        }

        @Override
        public void incMessagesRead(int numMessages) {
            pacing.incMessagesRead(numMessages);
        }

        @Override
        public void lastBytesRead(int bytes) {
            pacing.lastBytesRead(bytes);
        }

        @Override
        public int lastBytesRead() {
            return pacing.lastBytesRead();
        }

        @Override
        public void attemptedBytesRead(int bytes) {
            pacing.attemptedBytesRead(bytes);
        }

        @Override
        public int attemptedBytesRead() {
            return pacing.attemptedBytesRead();
        }

        @Override
        public boolean continueReading() {
            return pacing.continueReading();
        }

        @Override
        public boolean continueReading(UncheckedBooleanSupplier maybeMoreDataSupplier) {
            return pacing.continueReading(maybeMoreDataSupplier);
        }

        @Override
        public void readComplete() {
            pacing.readComplete();
            TcpConnection c = inPlace;
            if (c != null) {
                c.loopReadEnded();                    // after the reads' deliveries, on the error path too
            }
        }
    }
}
