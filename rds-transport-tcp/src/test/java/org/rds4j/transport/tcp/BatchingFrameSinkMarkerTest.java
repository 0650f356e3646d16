package org.rds4j.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelOption;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioSocketChannel;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.Callable;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The sink's marker on a real TCP connection on 127.0.0.1 that backs up: a pass that leaves bytes in Netty's outbound
 * buffer reports its offset only once the peer has read them, drain after drain with the one marker promise, and a
 * connection reset while a marker is out is reported once.
 */
class BatchingFrameSinkMarkerTest {
    /** Socket buffers this small, and 4 MiB per pass, so that every pass leaves most of its bytes unwritten. */
    private static final int SOCKET_BUFFER = 64 * 1024;
    private static final int PASS_BYTES = 4 << 20;
    private static final int PAYLOAD = 1024;
    private static final long TIMEOUT_SECONDS = 30;

    private final BlockingQueue<Long> transmitted = new LinkedBlockingQueue<>();
    private final BlockingQueue<Throwable> failed = new LinkedBlockingQueue<>();
    private final BatchingFrameSink.Outcome outcome = new BatchingFrameSink.Outcome() {
        @Override
        public void batchTransmitted(long endOffset) {
            transmitted.add(endOffset);
        }

        @Override
        public void batchFailed(Throwable cause) {
            failed.add(cause);
        }
    };

    @AfterEach
    void noLeaks() {
        LeakRecorder.assertNoLeaks();
    }

    @Test
    void eachDrainReportsItsPassAndAResetIsReportedOnce() throws Exception {
        MultiThreadIoEventLoopGroup group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
        try (ServerSocket server = new ServerSocket()) {
            server.setReceiveBufferSize(SOCKET_BUFFER);
            server.setSoTimeout((int) TimeUnit.SECONDS.toMillis(TIMEOUT_SECONDS));
            server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            var connect = new Bootstrap().group(group).channel(NioSocketChannel.class)
                    .option(ChannelOption.SO_SNDBUF, SOCKET_BUFFER)
                    .option(ChannelOption.ALLOCATOR, PooledByteBufAllocator.DEFAULT)
                    .handler(new ChannelInboundHandlerAdapter())
                    .connect(server.getLocalSocketAddress());
            assertTrue(connect.await(TIMEOUT_SECONDS, TimeUnit.SECONDS) && connect.isSuccess(), "connected");
            Channel ch = connect.channel();
            try (Socket peer = server.accept()) {
                peer.setSoTimeout((int) TimeUnit.SECONDS.toMillis(TIMEOUT_SECONDS));
                BatchingFrameSink sink = onLoop(ch, () -> new BatchingFrameSink(ch, outcome, true));
                for (int pass = 1; pass <= 3; pass++) {
                    long end = onLoop(ch, () -> writePass(sink));
                    assertEquals((long) pass * PASS_BYTES, end);
                    assertFalse(onLoop(ch, sink::isDrained),
                            "pass " + pass + ": Netty holds what the socket did not take");
                    assertNull(transmitted.poll(), "pass " + pass + ": reported before its bytes left");
                    read(peer, PASS_BYTES);
                    Long reported = transmitted.poll(TIMEOUT_SECONDS, TimeUnit.SECONDS);
                    assertEquals(end, reported, "pass " + pass + " reported once its bytes were read");
                }
                onLoop(ch, () -> writePass(sink));
                peer.setSoLinger(true, 0);      // the close resets the connection: the unwritten bytes can never leave
            }
            assertNotNull(failed.poll(TIMEOUT_SECONDS, TimeUnit.SECONDS), "the reset reported");
            assertTrue(ch.closeFuture().await(TIMEOUT_SECONDS, TimeUnit.SECONDS), "Netty closed the channel");
            onLoop(ch, () -> null);             // whatever the loop still had queued has run
            assertTrue(failed.isEmpty(), "reported once: " + failed);
            assertTrue(transmitted.isEmpty(), "nothing reported as transmitted: " + transmitted);
        } finally {
            group.shutdownGracefully(0, 0, TimeUnit.SECONDS).await(TIMEOUT_SECONDS, TimeUnit.SECONDS);
        }
    }

    /** Frames for {@link #PASS_BYTES} bytes, then the pass's end; returns the stream offset. On the event loop. */
    private static long writePass(BatchingFrameSink sink) {
        int frames = PASS_BYTES / (48 + PAYLOAD);
        int rest = PASS_BYTES - frames * (48 + PAYLOAD) - 48;
        for (int i = 0; i <= frames; i++) {
            ByteBuffer[] f = RecordingHandler.frame(i, RecordingHandler.payload(i, i < frames ? PAYLOAD : rest), 0);
            sink.write(f[0], f[1]);
        }
        sink.finish();
        return sink.streamOffset();
    }

    /** Reads exactly {@code n} bytes; each read waits at most the socket's timeout. */
    private static void read(Socket peer, int n) throws Exception {
        InputStream in = peer.getInputStream();
        byte[] b = new byte[64 * 1024];
        for (int left = n; left > 0; ) {
            int r = in.read(b, 0, Math.min(b.length, left));
            assertTrue(r > 0, "the stream ended with " + left + " bytes to come");
            left -= r;
        }
    }

    private static <T> T onLoop(Channel ch, Callable<T> task) throws Exception {
        return ch.eventLoop().submit(task).get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
    }
}
