package org.rds4j.bench.contenders;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.util.ReferenceCountUtil;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.rds4j.bench.Endpoint;

/**
 * One end of the Netty link, bridging Netty's callbacks to the harness's blocking calls the way an application
 * thread would: frames go from the event loop into a bounded queue that the receiving thread drains (a full queue
 * stops the event loop reading, so TCP pushes back on the sender); the sending thread waits while the channel is not
 * writable (Netty's high water mark), then copies the message into a pooled buffer and calls {@code writeAndFlush}.
 * Waits are in short slices so that a closed endpoint is noticed.
 */
final class NettyEndpoint implements Endpoint {
    private static final long SLICE_MILLIS = 50;
    /** Frames the queue holds at most; fewer for large frames, so that queued frames stay under about 64 MiB. */
    private final BlockingQueue<ByteBuf> frames;
    private final CountDownLatch active = new CountDownLatch(1);
    private final Object writability = new Object();
    private volatile Channel channel;
    private volatile boolean closed;
    private volatile Throwable failure;

    NettyEndpoint(int maxFrame) {
        this.frames = new ArrayBlockingQueue<>(Math.max(4, Math.min(4096, (64 << 20) / Math.max(1, maxFrame))));
    }

    ChannelInboundHandlerAdapter handler() {
        return new ChannelInboundHandlerAdapter() {
            @Override
            public void channelActive(ChannelHandlerContext ctx) {
                channel = ctx.channel();
                active.countDown();
                ctx.fireChannelActive();
            }

            @Override
            public void channelRead(ChannelHandlerContext ctx, Object msg) throws InterruptedException {
                ByteBuf frame = (ByteBuf) msg;
                while (!frames.offer(frame, SLICE_MILLIS, TimeUnit.MILLISECONDS)) {
                    if (closed) {
                        frame.release();
                        return;
                    }
                }
            }

            @Override
            public void channelWritabilityChanged(ChannelHandlerContext ctx) {
                synchronized (writability) {
                    writability.notifyAll();
                }
                ctx.fireChannelWritabilityChanged();
            }

            @Override
            public void channelInactive(ChannelHandlerContext ctx) {
                wakeWriters();
                ctx.fireChannelInactive();
            }

            @Override
            public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
                // Kept for the report: a cell that fails says why.
                failure = cause;
                ctx.close();
            }
        };
    }

    void awaitActive(long timeout, TimeUnit unit) throws IOException, InterruptedException {
        if (!active.await(timeout, unit)) {
            throw new IOException("the Netty channel did not become active within " + timeout + " " + unit);
        }
    }

    @Override
    public void send(ByteBuffer message) throws IOException {
        Channel ch = channel;
        synchronized (writability) {
            while (!ch.isWritable()) {
                checkOpen(ch);
                try {
                    writability.wait(SLICE_MILLIS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IOException("interrupted", e);
                }
            }
        }
        checkOpen(ch);
        ByteBuf buf = ch.alloc().directBuffer(message.remaining());
        buf.writeBytes(message);
        ch.writeAndFlush(buf);
    }

    @Override
    public int receive(ByteBuffer dst) throws IOException {
        ByteBuf frame;
        try {
            while ((frame = frames.poll(SLICE_MILLIS, TimeUnit.MILLISECONDS)) == null) {
                checkOpen(channel);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        }
        try {
            int len = frame.readableBytes();
            if (len > dst.capacity()) {
                throw new IOException("a message of " + len + " bytes does not fit in " + dst.capacity());
            }
            dst.clear().limit(len);
            frame.readBytes(dst);
            dst.flip();
            return len;
        } finally {
            frame.release();
        }
    }

    private void checkOpen(Channel ch) throws IOException {
        if (closed || !ch.isActive()) {
            throw new IOException("the Netty channel is closed", failure);
        }
    }

    private void wakeWriters() {
        synchronized (writability) {
            writability.notifyAll();
        }
    }

    void close() {
        closed = true;
        Channel ch = channel;
        if (ch != null) {
            ch.close();
        }
        wakeWriters();
    }

    /** Releases frames nobody received; called once the event loops have stopped. */
    void releaseQueued() {
        ByteBuf f;
        while ((f = frames.poll()) != null) {
            ReferenceCountUtil.release(f);
        }
    }
}
