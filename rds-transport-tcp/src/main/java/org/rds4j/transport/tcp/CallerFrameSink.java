package org.rds4j.transport.tcp;

import java.io.IOException;
import java.nio.ByteBuffer;
import org.rds4j.core.spi.FrameSink;

/**
 * A pass in an application thread under caller I/O (decision 0031): frames are packed into one 64 KiB direct buffer
 * and written to the socket in that thread, a write each time the buffer fills and one at the pass's end. What
 * the socket does not take goes to the connection's I/O thread ({@link TcpConnection#callerLeft}), and the pass stops
 * taking frames: the rest of its current frame follows the unwritten bytes there, in order, and the core's next pass
 * runs on the I/O thread, since {@link TcpConnection#callerSink} gives no sink while those bytes are unwritten.
 *
 * <p>One per connection, used only by the application thread that holds the core's connection, between
 * {@link #begin} and {@link #endPass}; nothing here allocates unless a write is short.
 */
final class CallerFrameSink implements FrameSink {
    /** The packing buffer: as large as the I/O thread's write batches. */
    static final int SIZE = 64 * 1024;

    private final TcpConnection connection;
    private final CallerSocket socket;
    private final ByteBuffer buf;
    /** A second view of {@link #buf} for {@link #claim}: its position moves, {@link #buf}'s does not. */
    private final ByteBuffer view;
    private long offset;
    /** A write was short or failed: the rest of this pass goes to the I/O thread. */
    private boolean handedOver;

    /** @param buf {@link #SIZE} direct bytes from the stack's pool, which the connection gives back at its close */
    CallerFrameSink(TcpConnection connection, CallerSocket socket, ByteBuffer buf) {
        this.connection = connection;
        this.socket = socket;
        this.buf = buf;
        this.view = buf.duplicate();
    }

    /** Starts a pass at the connection's stream offset. */
    CallerFrameSink begin(long streamOffset) {
        offset = streamOffset;
        buf.clear();
        handedOver = false;
        return this;
    }

    @Override
    public boolean isWritable() {
        return !handedOver;
    }

    /** The I/O thread's writes are all out, or the connection gives no caller sink. */
    @Override
    public boolean isDrained() {
        return !handedOver;
    }

    @Override
    public void write(ByteBuffer header, ByteBuffer payload) {
        copy(header);
        copy(payload);
    }

    private void copy(ByteBuffer src) {
        int pos = src.position();
        int remaining = src.limit() - pos;
        while (remaining > 0) {
            if (!buf.hasRemaining()) {
                drain();
            }
            if (handedOver) {
                // After a short write: this frame's remaining bytes follow the unwritten ones on the I/O thread.
                connection.callerLeft(src.duplicate().position(pos), offset + remaining);
                offset += remaining;
                return;
            }
            int n = Math.min(remaining, buf.remaining());
            buf.put(buf.position(), src, pos, n);
            buf.position(buf.position() + n);
            pos += n;
            remaining -= n;
            offset += n;
        }
    }

    @Override
    public ByteBuffer claim(int length) {
        if (handedOver || length >= buf.remaining()) {
            return null;
        }
        int at = buf.position();
        buf.position(at + length);
        offset += length;
        return view.limit(SIZE).position(at);
    }

    @Override
    public long streamOffset() {
        return offset;
    }

    /** Writes what the buffer holds; a short write hands the rest to the I/O thread. */
    private void drain() {
        buf.flip();
        if (!connection.enterCallerIo()) {
            handedOver = true;                      // the channel is closing: what the pass took is sent again
            buf.clear();                            // on the next connection, as whatever TCP had not delivered
            return;
        }
        try {
            while (buf.hasRemaining()) {
                if (socket.write(buf) <= 0) {
                    break;                          // the socket is full: the I/O thread waits for room
                }
            }
        } catch (IOException e) {
            handedOver = true;
            connection.callerFailed(e);
            buf.clear();
            return;
        } finally {
            connection.exitCallerIo();
        }
        if (buf.hasRemaining()) {
            handedOver = true;
            connection.callerLeft(buf, offset);
        }
        buf.clear();
    }

    @Override
    public void endPass() {
        if (!handedOver && buf.position() > 0) {
            drain();
        }
        if (!handedOver) {
            connection.callerWritten(offset);
        }
    }
}
