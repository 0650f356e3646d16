package org.rds4j.transport.tcp;

import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.buffer.UnpooledUnsafeDirectByteBuf;
import java.nio.ByteBuffer;
import org.rds4j.core.spi.ReadTarget;

/**
 * Memory the core wants a socket read to go straight into ({@link ReadTarget}: a waiting reader's own direct buffer,
 * or a large message's pooled one), as the buffer of that read: the read puts the rest of the message's payload
 * there with no copy out of a read buffer.
 *
 * <p>Netty reads into a buffer from its writer index up to its capacity, so this wrapper's capacity, as Netty sees
 * it, is a window that ends where the message's payload ends: the read can never take the bytes of the next frame
 * into the target. The memory is the core's; releasing the wrapper frees nothing, and tells its connection that the
 * read is over if the read brought nothing to pass on.
 *
 * <p>Made once per memory and kept with it ({@link ReadTarget#attach}), so reading in place allocates nothing in
 * steady state. Used by one connection's read at a time, on that connection's event loop.
 */
final class InPlaceReadBuf extends UnpooledUnsafeDirectByteBuf {
    private final ByteBuffer memory;
    private TcpConnection connection;
    private int window;

    private InPlaceReadBuf(ByteBuffer memory) {
        super(UnpooledByteBufAllocator.DEFAULT, memory.duplicate().clear(), memory.capacity());
        this.memory = memory;
    }

    /**
     * Starts one read of {@code c} into {@code t}: from its memory's position, at most {@link ReadTarget#bytes()}.
     *
     * @return the wrapper kept with the memory, or a new one then kept, with one reference, which the read takes
     */
    static InPlaceReadBuf begin(ReadTarget t, TcpConnection c) {
        ByteBuffer m = t.memory();
        InPlaceReadBuf b = t.attachment() instanceof InPlaceReadBuf kept && kept.memory == m ? kept : null;
        if (b == null) {
            b = new InPlaceReadBuf(m);
            t.attach(b);
        } else if (b.refCnt() == 0) {
            b.resetRefCnt();
        }
        return b.start(c, m.position(), t.bytes());
    }

    private InPlaceReadBuf start(TcpConnection c, int position, int bytes) {
        connection = c;
        window = position + bytes;
        setIndex(position, position);
        return this;
    }

    /** Netty's read stops here: at the end of the message's payload, not at the end of the target's buffer. */
    @Override
    public int capacity() {
        return memory == null ? super.capacity() : window;    // null while the superclass constructor runs
    }

    /**
     * The memory is the core's: nothing to free. A read Netty never passed on (nothing read, end of stream, an
     * error) ends here; after one it did, this is a no-op ({@link TcpConnection#inPlaceReadEnded}).
     */
    @Override
    protected void deallocate() {
        connection.inPlaceReadEnded(0);
    }
}
