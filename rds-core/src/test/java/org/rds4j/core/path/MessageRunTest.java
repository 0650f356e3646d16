package org.rds4j.core.path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;
import org.rds4j.core.spi.FrameSink;
import org.rds4j.core.testkit.Seeds;
import org.rds4j.core.wire.HeaderEncoder;
import org.rds4j.core.wire.RdsHeader;

/**
 * {@link MessageRun}: a run carries exactly the messages its sender was told it took, each framed as a message of its
 * own, numbered on from the run's first number.
 */
class MessageRunTest {

    /** Frames as a peer would read them: header fields and payload bytes. */
    private static final class Frames implements FrameSink {
        final List<RdsHeader> headers = new ArrayList<>();
        final List<byte[]> payloads = new ArrayList<>();
        long offset;

        @Override
        public boolean isWritable() {
            return true;
        }

        @Override
        public void write(ByteBuffer header, ByteBuffer payload) {
            RdsHeader h = new RdsHeader().decode(header.duplicate());
            byte[] p = new byte[payload.remaining()];
            payload.duplicate().get(p);
            assertEquals(h.length(), p.length, "h_len is the payload's length");
            headers.add(h);
            payloads.add(p);
            offset += header.remaining() + p.length;
        }

        @Override
        public long streamOffset() {
            return offset;
        }
    }

    private static ByteBuffer bytes(int len, int fill) {
        ByteBuffer b = ByteBuffer.allocate(len);
        for (int i = 0; i < len; i++) {
            b.put(i, (byte) (fill + i));
        }
        return b;
    }

    /** Appended messages go out in order, each with its own number, length and bytes; the caller's buffers unmoved. */
    @Property(tries = 200)
    void eachMessageOfARunIsAFrameOfItsOwn(@ForAll("lengths") List<Integer> lengths, @ForAll boolean retransmit,
                                           @ForAll @IntRange(min = 1, max = 1000) int firstSeq) {
        ByteBuffer first = bytes(lengths.get(0), 0);
        OutgoingMessage m = new OutgoingMessage().fillRun(7000, 9000, first, null, MessageRun.MAX_BYTES);
        assertEquals(0, first.position(), "the caller's buffer is left as it was");
        List<Integer> taken = new ArrayList<>(List.of(lengths.get(0)));
        List<Integer> fills = new ArrayList<>(List.of(0));
        int used = lengths.get(0);
        for (int i = 1; i < lengths.size(); i++) {
            ByteBuffer p = bytes(lengths.get(i), i * 7);
            int answer = m.append(p, false);
            boolean fits = used + lengths.get(i) <= MessageRun.MAX_BYTES && taken.size() < MessageRun.MAX_ENTRIES;
            assertEquals(fits, answer == OutgoingMessage.APPENDED, "message " + i + " of " + lengths.get(i) + " bytes");
            assertEquals(0, p.position(), "the caller's buffer is left as it was");
            if (fits) {
                taken.add(lengths.get(i));
                fills.add(i * 7);
                used += lengths.get(i);
            }
        }
        assertEquals(taken.size(), m.seal());
        assertTrue(m.append(bytes(1, 0), false) != OutgoingMessage.APPENDED, "sealed: no more");
        m.sequence = firstSeq;
        m.retransmit = retransmit;
        assertEquals(used, m.length());
        assertEquals(firstSeq + taken.size() - 1, m.lastSequence());
        Frames out = new Frames();
        m.writeTo(out, new HeaderEncoder(), 55, true);
        assertEquals(taken.size(), out.headers.size());
        for (int i = 0; i < out.headers.size(); i++) {
            RdsHeader h = out.headers.get(i);
            assertEquals(firstSeq + i, h.sequence(), "numbered on from the run's first");
            assertEquals(55, h.ack());
            assertEquals(7000, h.sourcePort());
            assertEquals(9000, h.destinationPort());
            assertEquals(retransmit ? RdsHeader.FLAG_RETRANSMITTED : 0, h.flags());
            assertEquals(taken.get(i), m.length(i));
            assertEquals(bytes(taken.get(i), fills.get(i)), ByteBuffer.wrap(out.payloads.get(i)), "message " + i);
        }
    }

    /**
     * A stream into one buffer that starts dirty, as a recycled batch does: frame by frame, or through claims of the
     * sink's own buffer when {@code claims}.
     */
    private static final class Stream implements FrameSink {
        final ByteBuffer buf;
        final boolean claims;
        final int start;
        int claimed;

        Stream(boolean direct, boolean claims, int start, long seed) {
            buf = direct ? ByteBuffer.allocateDirect(start + 70_000) : ByteBuffer.allocate(start + 70_000);
            Random r = new Random(seed);
            while (buf.hasRemaining()) {
                buf.put((byte) r.nextInt());
            }
            buf.clear().position(start);
            this.claims = claims;
            this.start = start;
        }

        @Override
        public boolean isWritable() {
            return true;
        }

        @Override
        public void write(ByteBuffer header, ByteBuffer payload) {
            buf.put(header.duplicate()).put(payload.duplicate());
        }

        @Override
        public ByteBuffer claim(int length) {
            if (!claims) {
                return null;
            }
            claimed++;
            int at = buf.position();
            buf.position(at + length);
            return buf.duplicate().position(at);
        }

        @Override
        public long streamOffset() {
            return buf.position() - start;
        }

        byte[] bytes() {
            byte[] b = new byte[buf.position() - start];
            buf.duplicate().position(start).get(b);
            return b;
        }
    }

    /**
     * A run written in place into a claimed region (a dirty one, heap or direct, anywhere in its buffer) is byte for
     * byte what the same run written frame by frame is: every header field, the zeros of h_credit to the extension
     * area, each payload, and the acknowledgement request on the last frame only.
     */
    @Property(tries = 300)
    void aRunWrittenInPlaceIsTheSameBytesAsFrameByFrame(@ForAll("lengths") List<Integer> lengths,
                                                        @ForAll boolean retransmit, @ForAll boolean direct,
                                                        @ForAll boolean askInRun, @ForAll long ack, @ForAll long seed,
                                                        @ForAll @IntRange(max = 1000) int start) {
        OutgoingMessage m = new OutgoingMessage().fillRun(65535, 1, bytes(lengths.get(0), 3), null,
                MessageRun.MAX_BYTES);
        for (int i = 1; i < lengths.size(); i++) {
            m.append(bytes(lengths.get(i), i), askInRun && i == lengths.size() / 2);
        }
        int n = m.seal();
        m.sequence = -3;                          // numbers wrap as unsigned 64-bit values
        m.retransmit = retransmit;
        Stream byFrame = new Stream(direct, false, start, seed);
        Stream inPlace = new Stream(direct, true, start, seed);
        m.writeTo(byFrame, new HeaderEncoder(), ack, true);
        m.writeTo(inPlace, new HeaderEncoder(), ack, true);
        assertEquals(1, inPlace.claimed, "the run claimed its frames at once");
        assertEquals(n * RdsHeader.SIZE + m.length(), inPlace.streamOffset());
        org.junit.jupiter.api.Assertions.assertArrayEquals(byFrame.bytes(), inPlace.bytes(), "seed " + seed);
    }

    @net.jqwik.api.Provide
    net.jqwik.api.Arbitrary<List<Integer>> lengths() {
        return net.jqwik.api.Arbitraries.integers().between(0, MessageRun.ENTRY_MAX).list().ofMinSize(1).ofMaxSize(80);
    }

    /** Only the last frame asks for a prompt acknowledgement, and only towards a peer that acknowledges. */
    @Test
    void aRunAsksForAnAcknowledgementOnceAtItsEnd() {
        OutgoingMessage m = new OutgoingMessage().fillRun(1, 2, bytes(8, 0), null, 64);
        m.append(bytes(8, 1), true);
        m.append(bytes(8, 2), false);
        m.seal();
        m.sequence = 10;
        Frames out = new Frames();
        m.writeTo(out, new HeaderEncoder(), 0, true);
        assertEquals(List.of(0, 0, RdsHeader.FLAG_ACK_REQUIRED),
                out.headers.stream().map(RdsHeader::flags).toList());
        Frames kernel = new Frames();
        m.writeTo(kernel, new HeaderEncoder(), 0, false);
        assertEquals(List.of(0, 0, 0), kernel.headers.stream().map(RdsHeader::flags).toList());
    }

    /** A pooled entry filled again as a plain message refuses a stale appender. */
    @Test
    void aRunFilledAgainAsAPlainMessageRefusesAppends() {
        OutgoingMessage m = new OutgoingMessage().fillRun(1, 2, bytes(8, 0), null, 64);
        m.fill(1, 2, bytes(16, 0), null);
        assertTrue(m.append(bytes(8, 1), false) != OutgoingMessage.APPENDED);
        assertEquals(16, m.length());
        assertEquals(1, m.entries());
    }

    /**
     * The race the run is built for: a sender appends as fast as it can while the path seals at a random moment.
     * Every message the sender was told is in the run is in it, in its place and whole; none it was refused is.
     * Seeded; the seed is in the failure message.
     */
    @Test
    void aSealRacingAppendsKeepsExactlyTheAppendedMessages() throws Exception {
        long seed = Seeds.seed();
        Random random = new Random(seed);
        for (int round = 0; round < 2_000; round++) {
            OutgoingMessage m = new OutgoingMessage().fillRun(1, 2, bytes(4, 0), null, MessageRun.MAX_BYTES);
            AtomicInteger told = new AtomicInteger(1);
            AtomicReference<Throwable> failure = new AtomicReference<>();
            CountDownLatch started = new CountDownLatch(1);
            Thread sender = new Thread(() -> {
                try {
                    started.countDown();
                    for (int i = 1; ; i++) {
                        if (m.append(bytes(4, i), false) != OutgoingMessage.APPENDED) {
                            return;
                        }
                        told.incrementAndGet();
                    }
                } catch (Throwable t) {
                    failure.set(t);
                }
            });
            sender.start();
            assertTrue(started.await(10, TimeUnit.SECONDS));
            for (int spin = random.nextInt(300); spin > 0; spin--) {
                Thread.onSpinWait();
            }
            int sealed = m.seal();
            sender.join(TimeUnit.SECONDS.toMillis(10));
            assertEquals(null, failure.get(), "seed " + seed);
            assertEquals(told.get(), sealed, "round " + round + ", seed " + seed);
            m.sequence = 1;
            Frames out = new Frames();
            m.writeTo(out, new HeaderEncoder(), 0, false);
            for (int i = 0; i < sealed; i++) {
                assertEquals(bytes(4, i), ByteBuffer.wrap(out.payloads.get(i)), "message " + i + ", seed " + seed);
            }
        }
    }
}
