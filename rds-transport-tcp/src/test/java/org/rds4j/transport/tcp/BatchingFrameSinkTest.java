package org.rds4j.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.AbstractByteBufAllocator;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.ChannelOption;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.util.ResourceLeakDetector;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.rds4j.core.spi.PayloadLoan;
import org.rds4j.core.wire.RdsHeader;
import org.junit.jupiter.api.Test;

/** The batching sink alone, on an {@link EmbeddedChannel}: batch boundaries, offsets, buffers left untouched. */
class BatchingFrameSinkTest {
    private final List<Long> transmitted = new ArrayList<>();
    private final List<Throwable> failed = new ArrayList<>();
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

    /** Each test's own, so that what one keeps never reaches the next. */
    private final BufferRecycler recycler = new BufferRecycler(BatchingFrameSink.BATCH_SIZE, BufferRecycler.MAX_BATCHES);

    @AfterEach
    void noLeaks() {
        recycler.releaseAll();
        LeakRecorder.assertNoLeaks();
    }

    private static EmbeddedChannel channel() {
        EmbeddedChannel ch = new EmbeddedChannel();
        ch.config().setOption(ChannelOption.ALLOCATOR, PooledByteBufAllocator.DEFAULT);
        return ch;
    }

    @Test
    void packsFramesIntoFullBatchesAndFlushesOnce() {
        EmbeddedChannel ch = channel();
        BatchingFrameSink sink = new BatchingFrameSink(ch, outcome, recycler, true);
        ByteArrayOutputStream expected = new ByteArrayOutputStream();
        int frames = 3000;                       // 3000 * (48 + 100) = 444,000 bytes: 13 full batches + a part
        int batch = BatchingFrameSink.BATCH_SIZE;
        for (int i = 0; i < frames; i++) {
            ByteBuffer[] f = RecordingHandler.frame(i, RecordingHandler.payload(i, 100), i);
            RecordingHandler.append(expected, f);
            int hp = f[0].position();
            int pp = f[1].position();
            sink.write(f[0], f[1]);
            assertEquals(hp, f[0].position());
            assertEquals(pp, f[1].position());
        }
        assertEquals(444_000, sink.streamOffset());
        assertNull(ch.readOutbound(), "nothing may leave before the flush");
        sink.finish();
        ByteArrayOutputStream got = new ByteArrayOutputStream();
        List<Integer> sizes = new ArrayList<>();
        for (ByteBuf b; (b = ch.readOutbound()) != null; ) {
            sizes.add(b.readableBytes());
            byte[] a = new byte[b.readableBytes()];
            b.readBytes(a);
            got.write(a, 0, a.length);
            b.release();
        }
        List<Integer> full = new ArrayList<>(java.util.Collections.nCopies(444_000 / batch, batch));
        full.add(444_000 % batch);
        assertEquals(full, sizes);
        assertTrue(java.util.Arrays.equals(expected.toByteArray(), got.toByteArray()));
        // One report per pass, of everything written: the embedded channel took it all, so it has left.
        assertEquals(List.of(444_000L), transmitted);
        assertTrue(failed.isEmpty());
        ch.finishAndReleaseAll();
    }

    @Test
    void aLargePayloadSpansBatches() {
        EmbeddedChannel ch = channel();
        BatchingFrameSink sink = new BatchingFrameSink(ch, outcome, recycler, true);
        ByteBuffer[] f = RecordingHandler.frame(1, RecordingHandler.payload(1, 1 << 20), 1);
        sink.write(f[0], f[1]);
        sink.finish();
        int batches = 0;
        long total = 0;
        for (ByteBuf b; (b = ch.readOutbound()) != null; ) {
            batches++;
            total += b.readableBytes();
            b.release();
        }
        assertEquals((1 << 20) / BatchingFrameSink.BATCH_SIZE + 1, batches);   // 48 + 1 MiB: full batches and 48 bytes
        assertEquals(48 + (1 << 20), total);
        assertEquals(48L + (1 << 20), transmitted.get(transmitted.size() - 1));
        ch.finishAndReleaseAll();
    }

    /** A loan as the core makes one: one borrower at a time, each given back once. */
    private static final class TestLoan implements PayloadLoan {
        final ByteBuffer bytes;
        int borrowed;
        int givenBack;

        TestLoan(ByteBuffer bytes) {
            this.bytes = bytes;
        }

        Object attachment;
        ByteBuffer memory;

        @Override
        public boolean borrow() {
            if (borrowed != givenBack) {
                return false;
            }
            borrowed++;
            return true;
        }

        @Override
        public ByteBuffer memory() {
            if (memory == null) {
                memory = bytes.duplicate().clear();
            }
            return memory;
        }

        @Override
        public Object attachment() {
            return attachment;
        }

        @Override
        public void attach(Object attachment) {
            this.attachment = attachment;
        }

        @Override
        public void giveBack() {
            givenBack++;
            assertEquals(borrowed, givenBack, "given back more often than borrowed");
        }
    }

    private static ByteBuffer direct(ByteBuffer heap) {
        ByteBuffer d = ByteBuffer.allocateDirect(heap.remaining());
        d.put(0, heap, heap.position(), heap.remaining());
        return d;
    }

    /** Reads what the channel was given into one stream: batches, slices of them, and lent payloads. */
    private static byte[] drain(EmbeddedChannel ch, List<Object> kinds) {
        return drain(ch, kinds, new ArrayList<>());
    }

    /** {@link #drain(EmbeddedChannel, List)}, noting the size of each buffer written as well. */
    private static byte[] drain(EmbeddedChannel ch, List<Object> kinds, List<Integer> sizes) {
        ByteArrayOutputStream got = new ByteArrayOutputStream();
        for (ByteBuf b; (b = ch.readOutbound()) != null; ) {
            kinds.add(b.getClass());
            sizes.add(b.readableBytes());
            byte[] a = new byte[b.readableBytes()];
            b.readBytes(a);
            got.write(a, 0, a.length);
            b.release();
        }
        return got.toByteArray();
    }

    /**
     * Writes 40 frames: every fourth from the second one lends its payload of about 70,000 bytes (which starts 3
     * bytes into its buffer and is left where it was), the others' payloads of about 100 bytes are copied. Appends
     * each frame to {@code expected}.
     *
     * @return the loans, in the order written
     */
    private static List<TestLoan> writeSmallAndLentFrames(BatchingFrameSink sink, ByteArrayOutputStream expected) {
        List<TestLoan> loans = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            boolean large = i % 4 == 1;
            // kind 1: a direct payload that starts 3 bytes into its buffer
            ByteBuffer[] f = RecordingHandler.frame(i, RecordingHandler.payload(i, large ? 70_000 + i : 100 + i),
                    large ? 1 : i);
            RecordingHandler.append(expected, f);
            if (large) {
                ByteBuffer payload = f[1];
                TestLoan loan = new TestLoan(payload);
                loans.add(loan);
                sink.write(f[0], payload, loan);
                assertEquals(3, payload.position());
                assertEquals(3 + 70_000 + i, payload.limit());
            } else {
                sink.write(f[0], f[1], null);
            }
        }
        return loans;
    }

    @Test
    void lentPayloadsLeaveFromWhereTheyLieInStreamOrder() {
        EmbeddedChannel ch = channel();
        BatchingFrameSink sink = new BatchingFrameSink(ch, outcome, recycler, true);
        ByteArrayOutputStream expected = new ByteArrayOutputStream();
        List<TestLoan> loans = writeSmallAndLentFrames(sink, expected);
        long total = expected.size();
        assertEquals(total, sink.streamOffset());
        sink.finish();
        for (TestLoan l : loans) {
            assertEquals(1, l.borrowed);
            assertEquals(0, l.givenBack, "Netty still holds the write");
        }
        List<Object> kinds = new ArrayList<>();
        assertArrayEquals(expected.toByteArray(), drain(ch, kinds));
        assertEquals(10, kinds.stream().filter(k -> k == LentPayloadBuf.class).count());
        for (TestLoan l : loans) {
            assertEquals(1, l.givenBack, "given back once written");
        }
        // Lent again, the same wrapper: nothing allocated per message.
        TestLoan again = loans.get(0);
        Object wrapper = again.attachment;
        ByteBuffer[] f = RecordingHandler.frame(1, RecordingHandler.payload(1, 70_001), 1);
        sink.write(f[0], again.bytes, again);
        sink.finish();
        List<Object> more = new ArrayList<>();
        ByteArrayOutputStream expectedAgain = new ByteArrayOutputStream();
        RecordingHandler.append(expectedAgain, f);
        assertArrayEquals(expectedAgain.toByteArray(), drain(ch, more));
        assertSame(wrapper, again.attachment);
        assertEquals(2, again.givenBack);
        assertEquals(List.of(total, total + expectedAgain.size()), transmitted);
        ch.finishAndReleaseAll();
    }

    /**
     * Over a channel that writes through {@code ByteBuffer} views (NIO), a slice would make a new view for every
     * write: there the batch holding a lent payload's header is written whole, and the next frame starts another.
     * The stream is the same, and every buffer written besides the payloads is a whole batch, never a slice.
     */
    @Test
    void withoutSlicingTheBatchAheadOfALentPayloadIsWrittenWhole() {
        EmbeddedChannel ch = channel();
        BatchingFrameSink sink = new BatchingFrameSink(ch, outcome, recycler, true, false);
        ByteArrayOutputStream expected = new ByteArrayOutputStream();
        List<TestLoan> loans = writeSmallAndLentFrames(sink, expected);
        sink.finish();
        ByteArrayOutputStream got = new ByteArrayOutputStream();
        int lent = 0;
        int batches = 0;
        for (ByteBuf b; (b = ch.readOutbound()) != null; ) {
            if (b instanceof LentPayloadBuf) {
                lent++;
            } else {
                batches++;
                assertEquals(BatchingFrameSink.BATCH_SIZE, b.capacity(), "a whole batch, not a slice of one");
                assertEquals(0, b.readerIndex());
            }
            byte[] a = new byte[b.readableBytes()];
            b.readBytes(a);
            got.write(a, 0, a.length);
            b.release();
        }
        assertArrayEquals(expected.toByteArray(), got.toByteArray());
        assertEquals(10, lent);
        assertEquals(11, batches, "one batch ahead of each lent payload, and the last frames' own");
        for (TestLoan l : loans) {
            assertEquals(1, l.givenBack, "given back once written");
        }
        assertEquals(List.of((long) expected.size()), transmitted);
        ch.finishAndReleaseAll();
    }

    /**
     * Frames written in place into claimed regions leave in stream order among copied and lent ones. A claim is
     * refused only where it would reach the batch's end (the caller then writes frame by frame), so no written batch
     * is larger than a batch and the claimed bytes are in the batch before it is written.
     */
    @Test
    void claimedFramesLeaveInStreamOrderAmongCopiedAndLentOnes() {
        EmbeddedChannel ch = channel();
        BatchingFrameSink sink = new BatchingFrameSink(ch, outcome, recycler, true);
        ByteArrayOutputStream expected = new ByteArrayOutputStream();
        List<TestLoan> loans = new ArrayList<>();
        int claimed = 0;
        int refused = 0;
        for (int i = 0; i < 300; i++) {
            int kind = i % 6;
            int len = kind == 5 ? 40_000 + i : 1 + (i * 997) % 6_000;
            ByteBuffer[] f = RecordingHandler.frame(i, RecordingHandler.payload(i, len), kind == 5 ? 1 : i);
            RecordingHandler.append(expected, f);
            if (kind < 3) {
                ByteBuffer dst = sink.claim(RdsHeader.SIZE + len);
                if (dst == null) {
                    refused++;
                    sink.write(f[0], f[1]);
                } else {
                    claimed++;
                    int at = dst.position();
                    int limit = dst.limit();
                    dst.put(at, f[0], f[0].position(), RdsHeader.SIZE);
                    dst.put(at + RdsHeader.SIZE, f[1], f[1].position(), len);
                    assertEquals(at, dst.position(), "absolute puts leave the claim's view where it was");
                    assertEquals(limit, dst.limit());
                }
            } else if (kind == 5) {
                TestLoan loan = new TestLoan(f[1]);
                loans.add(loan);
                sink.write(f[0], f[1], loan);
            } else {
                sink.write(f[0], f[1], null);
            }
            assertEquals(expected.size(), sink.streamOffset(), "frame " + i);
        }
        sink.finish();
        assertTrue(claimed > 100, claimed + " claims granted");
        assertTrue(refused > 0, "some claims met a batch's end");
        List<Object> kinds = new ArrayList<>();
        List<Integer> sizes = new ArrayList<>();
        assertArrayEquals(expected.toByteArray(), drain(ch, kinds, sizes));
        assertTrue(sizes.stream().allMatch(n -> n <= BatchingFrameSink.BATCH_SIZE || n > 40_000), sizes.toString());
        assertEquals(loans.size(), kinds.stream().filter(k -> k == LentPayloadBuf.class).count());
        assertEquals(List.of((long) expected.size()), transmitted);
        ch.finishAndReleaseAll();
    }

    @Test
    void aPayloadOutOnLoanOrUnderTlsIsCopied() {
        for (boolean borrowing : new boolean[] {true, false}) {
            EmbeddedChannel ch = channel();
            BatchingFrameSink sink = new BatchingFrameSink(ch, outcome, recycler, borrowing);
            ByteBuffer[] f = RecordingHandler.frame(7, RecordingHandler.payload(7, 50_000), 7);
            ByteArrayOutputStream expected = new ByteArrayOutputStream();
            RecordingHandler.append(expected, f);
            RecordingHandler.append(expected, f);
            ByteBuffer payload = direct(f[1]);
            TestLoan loan = new TestLoan(payload);
            sink.write(f[0], payload, loan);
            sink.write(f[0], payload, loan);            // the same payload again while the first write holds it
            sink.finish();
            assertEquals(borrowing ? 1 : 0, loan.borrowed);
            List<Object> kinds = new ArrayList<>();
            assertArrayEquals(expected.toByteArray(), drain(ch, kinds));
            assertEquals(borrowing ? 1 : 0, kinds.stream().filter(k -> k == LentPayloadBuf.class).count());
            assertEquals(loan.borrowed, loan.givenBack);
            ch.finishAndReleaseAll();
        }
    }

    @Test
    void aLentPayloadWrittenToAClosedChannelIsGivenBack() {
        EmbeddedChannel ch = channel();
        BatchingFrameSink sink = new BatchingFrameSink(ch, outcome, recycler, true);
        ch.close();
        ByteBuffer[] f = RecordingHandler.frame(3, RecordingHandler.payload(3, 40_000), 3);
        TestLoan loan = new TestLoan(direct(f[1]));
        sink.write(f[0], loan.bytes, loan);
        sink.finish();
        assertEquals(1, loan.borrowed);
        assertEquals(1, loan.givenBack);
        assertTrue(transmitted.isEmpty());
        ch.finishAndReleaseAll();
    }

    @Test
    void writesToAClosedChannelReleaseTheirBuffersAndReportNothing() {
        EmbeddedChannel ch = channel();
        BatchingFrameSink sink = new BatchingFrameSink(ch, outcome, recycler, true);
        ch.close();
        for (int i = 0; i < 10; i++) {
            ByteBuffer[] f = RecordingHandler.frame(i, RecordingHandler.payload(i, 30_000), i);
            sink.write(f[0], f[1]);
        }
        sink.finish();
        // Batches go out with the void promise: Netty releases a buffer written to a closed channel (the leak check
        // after each test) and the close itself is what the connection reports; nothing counts as transmitted. A
        // write that fails on an open channel fires exceptionCaught, where TcpConnection closes the connection.
        assertTrue(transmitted.isEmpty());
        assertTrue(failed.isEmpty());
        ch.finishAndReleaseAll();
    }

    @Test
    void discardReleasesAPartialBatch() {
        EmbeddedChannel ch = channel();
        BatchingFrameSink sink = new BatchingFrameSink(ch, outcome, recycler, true);
        ByteBuffer[] f = RecordingHandler.frame(1, new byte[10], 0);
        sink.write(f[0], f[1]);
        sink.discard();
        sink.finish();
        assertNull(ch.readOutbound());
        ch.finishAndReleaseAll();
    }

    /** One small frame through the sink and out of the channel: the batch, still unreleased. */
    private static ByteBuf pass(EmbeddedChannel ch, BatchingFrameSink sink, int seq) {
        ByteBuffer[] f = RecordingHandler.frame(seq, RecordingHandler.payload(seq, 100), seq);
        sink.write(f[0], f[1]);
        sink.finish();
        ByteBuf b = ch.readOutbound();
        assertNull(ch.readOutbound(), "one batch per small pass");
        return b;
    }

    private static byte[] frameBytes(int seq) {
        ByteArrayOutputStream expected = new ByteArrayOutputStream();
        RecordingHandler.append(expected, RecordingHandler.frame(seq, RecordingHandler.payload(seq, 100), seq));
        return expected.toByteArray();
    }

    private static byte[] readable(ByteBuf b) {
        byte[] a = new byte[b.readableBytes()];
        b.getBytes(b.readerIndex(), a);
        return a;
    }

    @Test
    void aWrittenBatchIsUsedAgainByTheNextPass() {
        EmbeddedChannel ch = channel();
        BatchingFrameSink sink = new BatchingFrameSink(ch, outcome, recycler, true);
        ByteBuf first = pass(ch, sink, 1);
        assertArrayEquals(frameBytes(1), readable(first));
        first.release();                          // what Netty does once the batch is written
        ByteBuf second = pass(ch, sink, 2);
        assertSame(first, second, "the written batch came back");
        assertArrayEquals(frameBytes(2), readable(second), "and holds the new frame only");
        second.release();
        assertEquals(1, recycler.allocated());
        assertEquals(1, recycler.reused());
        ch.finishAndReleaseAll();
    }

    @Test
    void aBatchStillOutIsNeverUsedAgain() {
        EmbeddedChannel ch = channel();
        BatchingFrameSink sink = new BatchingFrameSink(ch, outcome, recycler, true);
        ByteBuf out = pass(ch, sink, 1);          // not released: Netty has not written it yet
        ByteBuf next = pass(ch, sink, 2);
        assertNotSame(out, next);
        assertArrayEquals(frameBytes(1), readable(out), "the batch still out is untouched");
        assertEquals(2, recycler.allocated());
        assertEquals(0, recycler.reused());
        out.release();
        next.release();
        ByteBuf third = pass(ch, sink, 3);
        assertSame(next, third, "of two written batches, the one given back last (the warmest) comes back first");
        ByteBuf fourth = pass(ch, sink, 4);
        assertSame(out, fourth, "then the other");
        assertEquals(2, recycler.allocated());
        third.release();
        fourth.release();
        ch.finishAndReleaseAll();
    }

    @Test
    void theRecyclerKeepsAtMostItsLimitAndLetsTheOldestGo() {
        EmbeddedChannel ch = channel();
        BatchingFrameSink sink = new BatchingFrameSink(ch, outcome, recycler, true);
        List<ByteBuf> out = new ArrayList<>();
        for (int i = 0; i < BufferRecycler.MAX_BATCHES + 4; i++) {
            out.add(pass(ch, sink, i));           // all still out
        }
        assertEquals(BufferRecycler.MAX_BATCHES, recycler.kept());
        assertEquals(BufferRecycler.MAX_BATCHES + 4, recycler.allocated());
        for (int i = 0; i < out.size(); i++) {
            assertArrayEquals(frameBytes(i), readable(out.get(i)), "batch " + i + " intact");
            out.get(i).release();                 // the four let go are freed here, the rest stay kept
        }
        ch.finishAndReleaseAll();
    }

    /**
     * At Netty's default level the leak detector wraps one allocation in 128 and tracks every slice of it with a stack
     * trace: such a batch is written once and freed, never kept for the next pass. Here every buffer the channel's
     * allocator gives is a wrapper (a slice of a pooled buffer, as a tracked one is a wrapper of one).
     */
    @Test
    void aBatchTheLeakDetectorTracksIsUsedOnceAtTheDefaultLevel() {
        EmbeddedChannel ch = new EmbeddedChannel();
        ch.config().setOption(ChannelOption.ALLOCATOR, new AbstractByteBufAllocator(true) {
            @Override
            protected ByteBuf newHeapBuffer(int initialCapacity, int maxCapacity) {
                throw new UnsupportedOperationException("batches are direct");
            }

            @Override
            protected ByteBuf newDirectBuffer(int initialCapacity, int maxCapacity) {
                ByteBuf pooled = PooledByteBufAllocator.DEFAULT.directBuffer(maxCapacity, maxCapacity);
                ByteBuf wrapper = pooled.retainedSlice(0, maxCapacity).clear();
                pooled.release();
                return wrapper;
            }

            @Override
            public boolean isDirectBufferPooled() {
                return true;
            }
        });
        BatchingFrameSink sink = new BatchingFrameSink(ch, outcome, recycler, true);
        ResourceLeakDetector.Level before = ResourceLeakDetector.getLevel();
        try {
            ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.SIMPLE);
            pass(ch, sink, 1).release();
            ByteBuf next = pass(ch, sink, 2);
            assertEquals(2, recycler.allocated(), "the tracked batch is not handed out again");
            assertEquals(0, recycler.reused());
            assertEquals(0, recycler.kept(), "nor kept");
            assertArrayEquals(frameBytes(2), readable(next));
            next.release();
            assertEquals(0, next.refCnt(), "its holder freed it");
        } finally {
            ResourceLeakDetector.setLevel(before);
        }
        ch.finishAndReleaseAll();
    }

    @Test
    void aChangeOfLeakDetectionLevelLetsTheKeptBatchesGo() {
        EmbeddedChannel ch = channel();
        BatchingFrameSink sink = new BatchingFrameSink(ch, outcome, recycler, true);
        ResourceLeakDetector.Level before = ResourceLeakDetector.getLevel();
        ResourceLeakDetector.Level other = before == ResourceLeakDetector.Level.PARANOID
                ? ResourceLeakDetector.Level.ADVANCED : ResourceLeakDetector.Level.PARANOID;
        try {
            pass(ch, sink, 1).release();
            ResourceLeakDetector.setLevel(other);
            ByteBuf next = pass(ch, sink, 2);
            assertEquals(2, recycler.allocated(), "the batch kept under the old level is not handed out again");
            assertEquals(0, recycler.reused());
            assertEquals(1, recycler.kept(), "and the recycler let it go");
            next.release();
        } finally {
            ResourceLeakDetector.setLevel(before);
        }
        ch.finishAndReleaseAll();
    }
}
