package org.rds4j.bench.contenders;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import org.rds4j.bench.Endpoint;

/**
 * One end of the raw NIO link: a channel, a 4-byte big-endian length before each message. Reads go through a 256 KiB
 * buffer so that small messages cost one read per many messages; the bulk of a large message is read straight into
 * the caller's buffer. All buffers are direct and reused: the steady state allocates nothing.
 *
 * <p>The channel is blocking, or non-blocking for the busy-spinning reference: then a read or write that moved
 * nothing is simply tried again (with {@link Thread#onSpinWait()}), so the thread never sleeps in the kernel, which
 * is what rds4j's busy-poll mode is compared with.
 */
final class NioEndpoint implements Endpoint {
    /** Packed writes are at most this long: the packed-NIO reference's definition (docs/tools.md). */
    static final int PACKED_WRITE = 64 * 1024;
    private static final int READ_BUFFER = 256 * 1024;

    private final SocketChannel channel;
    private final boolean packed;
    private final boolean spin;
    private final ByteBuffer out = ByteBuffer.allocateDirect(PACKED_WRITE);
    private final ByteBuffer header = ByteBuffer.allocateDirect(4);
    private final ByteBuffer[] gather = new ByteBuffer[2];
    private final ByteBuffer in = ByteBuffer.allocateDirect(READ_BUFFER).flip();

    /**
     * @param spin whether the channel is non-blocking and every read and write spins until it moves something
     */
    NioEndpoint(SocketChannel channel, boolean packed, boolean spin) throws IOException {
        this.channel = channel;
        this.packed = packed;
        this.spin = spin;
        channel.configureBlocking(!spin);
    }

    @Override
    public void send(ByteBuffer message) throws IOException {
        int len = message.remaining();
        if (packed) {
            if (out.remaining() < 4 + len) {
                flush();
            }
            if (4 + len <= out.capacity()) {
                out.putInt(len);
                out.put(message);
                return;
            }
            // Larger than a packed write: it goes out on its own, as below.
        }
        header.clear();
        header.putInt(len).flip();
        gather[0] = header;
        gather[1] = message;
        // One gathering write per message; the loop is only for the kernel taking part of it.
        while (message.hasRemaining()) {
            idle(channel.write(gather));
        }
        gather[1] = null;
    }

    @Override
    public void flush() throws IOException {
        if (out.position() == 0) {
            return;
        }
        out.flip();
        while (out.hasRemaining()) {
            idle(channel.write(out));
        }
        out.clear();
    }

    @Override
    public int receive(ByteBuffer dst) throws IOException {
        fill(4);
        int len = in.getInt();
        if (len < 0 || len > dst.capacity()) {
            throw new IOException("a message of " + len + " bytes does not fit in " + dst.capacity());
        }
        dst.clear().limit(len);
        if (len - in.remaining() < READ_BUFFER / 4) {
            // Small (or mostly buffered): read ahead through the buffer, which also brings the next messages.
            fill(len);
            copy(in, dst, len);
        } else {
            copy(in, dst, in.remaining());
            while (dst.hasRemaining()) {
                if (idle(channel.read(dst)) < 0) {
                    throw new EOFException("the connection closed in the middle of a message");
                }
            }
        }
        dst.flip();
        return len;
    }

    /** Moves the next {@code n} bytes of {@code from} into {@code to}, advancing both (also for nio-handoff). */
    static void copy(ByteBuffer from, ByteBuffer to, int n) {
        int limit = from.limit();
        from.limit(from.position() + n);
        to.put(from);
        from.limit(limit);
    }

    /** Makes at least {@code n} bytes readable in {@code in}. */
    private void fill(int n) throws IOException {
        if (in.remaining() >= n) {
            return;
        }
        in.compact();
        while (in.position() < n) {
            if (idle(channel.read(in)) < 0) {
                throw new EOFException("the connection closed");
            }
        }
        in.flip();
    }

    /**
     * Spins once if a non-blocking read or write moved nothing; a closed channel throws on the next try, which bounds
     * the spin as the harness needs.
     */
    private long idle(long moved) {
        if (moved == 0 && spin) {
            Thread.onSpinWait();
        }
        return moved;
    }

    void close() {
        try {
            channel.close();
        } catch (IOException ignored) {
            // Closing is all that is left to do.
        }
    }
}
