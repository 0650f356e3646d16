package org.rds4j.transport.loopback;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.rds4j.RdsStackConfig;
import org.rds4j.core.spi.ConnectionHandler;
import org.rds4j.core.spi.FrameSink;
import org.rds4j.core.spi.TransportConnection;
import org.rds4j.core.spi.TransportInstance;

/**
 * The transport's segments, through its SPI: a reader that falls behind a writer of many small passes gets their
 * bytes whole and in order, in about one segment per chunk rather than one per pass (the segments it has not read yet
 * coalesce), so the writer's segment pool is never outgrown and steady traffic allocates none. Every other frame is
 * written in place into a claimed region of the chunk, which a claim never fills. A writer whose reader keeps up
 * never finds its chunk pool empty. The stacks here have a thread each ({@code loopback.sharedLoop=false}), as
 * segments wait between two threads only.
 */
@Timeout(60)
class LoopbackSegmentsTest {
    private static final int PASSES = 2_000;
    private static final int PASS_BYTES = 100;

    @Test
    void passesQueuedForASlowReaderCoalesceAndArriveWholeInOrder() throws Exception {
        Reader reader = new Reader();
        writeBehindAHeldReader("10.99.7.1", "10.99.7.2", reader);
        int chunks = PASSES * PASS_BYTES / (64 * 1024) + 1;
        // Pass 655 begins 36 bytes before the first chunk's end: its claim is refused, and its frame spans two chunks.
        assertEquals(1, reader.writer.refused.get(), "claims refused");
        assertEquals(PASSES / 2 - 1, reader.writer.claimed.get(), "claims granted");
        // One segment for the first pass (read while the others queued), then at most one per chunk they span.
        assertTrue(reader.calls.get() <= chunks + 2, reader.calls.get() + " segments read for " + PASSES
                + " passes over " + chunks + " chunks: queued segments did not coalesce");
    }

    /**
     * The reading side's own transmit, asked for while it reads a segment (as the core queues an acknowledgement), runs
     * before the next waiting segment is read: a reader behind a fast writer acknowledges per segment, not once for
     * all that waited, so a writer that waits for acknowledgements is not stopped for all of them at once.
     */
    @Test
    void aTransmitAskedForWhileReadingLeavesBeforeTheNextWaitingSegmentIsRead() throws Exception {
        AckingReader reader = new AckingReader();
        writeBehindAHeldReader("10.99.7.3", "10.99.7.4", reader);
        // Asked for during the second read, with at least two more segments waiting (the passes span 4 chunks).
        assertTrue(reader.calls.get() >= 4, reader.calls.get() + " segments read");
        assertEquals(2, reader.readsBeforeTransmit.get(), "segments read when the reader's transmit ran ("
                + reader.calls.get() + " in all): it waited for every waiting segment");
    }

    /**
     * A writer whose reader keeps up moves between the chunk it fills and the spare it starts with, so over several
     * chunks of stream it makes none: a stream that moves little (the congestion maps on a path without data) would
     * otherwise make one the first time it filled a chunk, whenever that came.
     */
    @Test
    void aWriterWhoseReaderKeepsUpMakesNoChunkAfterItsFirstTwo() throws Exception {
        ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
        LockstepReader reader = new LockstepReader();
        LockstepWriter writer = new LockstepWriter(reader);
        try (TransportInstance ta = new LoopbackTransport().open(host("lockstep-a", timer, null));
             TransportInstance tb = new LoopbackTransport().open(host("lockstep-b", timer, reader))) {
            InetAddress b = InetAddress.getByName("10.99.7.6");
            tb.listen(b);
            ta.connect(InetAddress.getByName("10.99.7.5"), b, -1, writer);
            TransportConnection c = writer.connected.get(20, TimeUnit.SECONDS);
            reader.writer = c;
            c.requestTransmit();
            assertTrue(reader.all.await(20, TimeUnit.SECONDS), "bytes read: " + reader.bytes.get());
            assertEquals(0, ((LoopbackEndpoint) c).poolMisses(), "chunks made for an empty pool while "
                    + LockstepWriter.FRAMES * LockstepWriter.FRAME_BYTES + " bytes went over in lockstep");
        } finally {
            timer.shutdownNow();
        }
    }

    /** Writes a frame per pass, each once the reader has read the one before. */
    private static final class LockstepWriter extends SpiHandler {
        static final int FRAMES = 200;
        static final int FRAME_BYTES = 1_000;        // frames straddle the chunks' ends
        final CompletableFuture<TransportConnection> connected = new CompletableFuture<>();
        private final LockstepReader reader;
        private final ByteBuffer frame = ByteBuffer.allocate(FRAME_BYTES);
        private int written;

        LockstepWriter(LockstepReader reader) {
            this.reader = reader;
        }

        @Override
        public void onConnected(TransportConnection c) {
            connected.complete(c);
        }

        @Override
        public void transmit(FrameSink sink) {
            if (written < FRAMES && reader.bytes.get() == (long) written * FRAME_BYTES) {
                sink.write(frame.clear(), ByteBuffer.allocate(0));
                written++;
            }
        }
    }

    /** Reads the writer's frames, asking for the next one when a frame is in. */
    private static final class LockstepReader extends SpiHandler {
        final CountDownLatch all = new CountDownLatch(1);
        final AtomicLong bytes = new AtomicLong();
        volatile TransportConnection writer;

        @Override
        public void onBytes(ByteBuffer data) {
            long n = bytes.addAndGet(data.remaining());
            data.position(data.limit());
            if (n == (long) LockstepWriter.FRAMES * LockstepWriter.FRAME_BYTES) {
                all.countDown();
            } else if (n % LockstepWriter.FRAME_BYTES == 0) {
                writer.requestTransmit();
            }
        }
    }

    /**
     * Connects a {@link Writer} at {@code from} to {@code reader} at {@code to}, holds the reader's thread in its first
     * read while the writer makes all its passes, then lets it read on, and checks the stream arrived byte for byte.
     */
    private static void writeBehindAHeldReader(String from, String to, Reader reader) throws Exception {
        InetAddress a = InetAddress.getByName(from);
        InetAddress b = InetAddress.getByName(to);
        ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
        Writer writer = new Writer();
        reader.writer = writer;
        try (TransportInstance ta = new LoopbackTransport().open(host("seg-" + from, timer, null));
             TransportInstance tb = new LoopbackTransport().open(host("seg-" + to, timer, reader))) {
            tb.listen(b);
            ta.connect(a, b, -1, writer);
            TransportConnection c = writer.connected.get(20, TimeUnit.SECONDS);
            c.requestTransmit();
            assertTrue(writer.done.await(20, TimeUnit.SECONDS), "passes made: " + writer.passes.get());
            reader.hold.countDown();
            assertTrue(reader.all.await(20, TimeUnit.SECONDS), "bytes read: " + reader.bytes.size());
            assertArrayEquals(writer.expected(), reader.bytes.toByteArray(), "the stream, byte for byte");
        } finally {
            timer.shutdownNow();
        }
    }

    /** Writes one small frame per pass, and asks for another pass until all are written. */
    private static final class Writer extends SpiHandler {
        final CompletableFuture<TransportConnection> connected = new CompletableFuture<>();
        final AtomicInteger passes = new AtomicInteger();
        final CountDownLatch done = new CountDownLatch(1);
        final AtomicInteger claimed = new AtomicInteger();
        final AtomicInteger refused = new AtomicInteger();
        private TransportConnection connection;

        @Override
        public void onConnected(TransportConnection c) {
            connection = c;
            connected.complete(c);
        }

        @Override
        public void transmit(FrameSink sink) {
            int n = passes.get();
            if (n == PASSES || !sink.isWritable()) {
                return;
            }
            // Every other frame is written in place where the chunk has room for it (FrameSink.claim).
            ByteBuffer dst = n % 2 == 1 ? sink.claim(PASS_BYTES) : null;
            if (dst != null) {
                dst.put(dst.position(), frame(n), 0, PASS_BYTES);
                claimed.incrementAndGet();
            } else {
                if (n % 2 == 1) {
                    refused.incrementAndGet();
                }
                sink.write(frame(n), ByteBuffer.allocate(0));
            }
            if (passes.incrementAndGet() == PASSES) {
                done.countDown();
            } else {
                connection.requestTransmit();      // a pass of its own for every frame: a segment each
            }
        }

        byte[] expected() {
            ByteArrayOutputStream all = new ByteArrayOutputStream();
            for (int n = 0; n < PASSES; n++) {
                all.writeBytes(frame(n).array());
            }
            return all.toByteArray();
        }

        private static ByteBuffer frame(int n) {
            ByteBuffer f = ByteBuffer.allocate(PASS_BYTES);
            for (int i = 0; i < PASS_BYTES; i++) {
                f.put(i, (byte) (n * 31 + i));
            }
            return f;
        }
    }

    /** Records the stream; its first read waits for {@link #hold}, keeping its stack's thread busy. */
    private static class Reader extends SpiHandler {
        final CountDownLatch hold = new CountDownLatch(1);
        final CountDownLatch all = new CountDownLatch(1);
        final AtomicInteger calls = new AtomicInteger();
        final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        Writer writer;

        @Override
        public void onBytes(ByteBuffer data) {
            if (calls.getAndIncrement() == 0) {
                try {
                    if (!hold.await(20, TimeUnit.SECONDS)) {
                        throw new IllegalStateException("the test never let the reader go on");
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
            byte[] b = new byte[data.remaining()];
            data.get(b);
            synchronized (bytes) {
                bytes.writeBytes(b);
                if (bytes.size() == PASSES * PASS_BYTES) {
                    all.countDown();
                }
            }
        }
    }

    /** A {@link Reader} that asks for a transmit of its own during its second read and notes when it runs. */
    private static final class AckingReader extends Reader {
        final AtomicInteger readsBeforeTransmit = new AtomicInteger(-1);
        /** Its end of the connection, from the accepting host (an accepted connection hears no onConnected). */
        volatile TransportConnection connection;

        @Override
        public void onBytes(ByteBuffer data) {
            int call = calls.get();
            super.onBytes(data);
            if (call == 1) {
                connection.requestTransmit();
            }
        }

        @Override
        public void transmit(FrameSink sink) {
            readsBeforeTransmit.compareAndSet(-1, calls.get());
        }
    }

    /**
     * A stack with a loop of its own (the tests hold one stack's thread while the other's writes), whose accepted
     * connections go to {@code handler}; an {@link AckingReader} is told its end.
     */
    private static SpiHost host(String name, ScheduledExecutorService timer, ConnectionHandler handler) {
        RdsStackConfig config = RdsStackConfig.builder().name(name).jmx(false).property("loopback.sharedLoop", "false")
                .build();
        return new SpiHost(config, timer, c -> {
            if (handler instanceof AckingReader r) {
                r.connection = c;
            }
            return handler;
        });
    }
}
