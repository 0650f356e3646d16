package org.rds4j.core.wire;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;

/** Cutting the TCP byte stream into [48-byte header][h_len payload] messages (docs/protocol.md, "The byte stream"; net/rds/tcp_recv.c). */
class FrameDecoderTest {
    private static final long CAP = 1 << 20;

    /** A message as it travels: the 48 header bytes and the payload. */
    record Frame(byte[] header, byte[] payload) {
        RdsHeader decoded() {
            return new RdsHeader().decode(ByteBuffer.wrap(header));
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Frame f && Arrays.equals(f.header, header) && Arrays.equals(f.payload, payload);
        }

        @Override
        public int hashCode() {
            return Arrays.hashCode(header) * 31 + Arrays.hashCode(payload);
        }

        @Override
        public String toString() {
            return decoded() + " +" + payload.length;
        }
    }

    /** Collects every message, copying the (reused) header and the payload. */
    static final class Collector implements FrameDecoder.Listener {
        final List<Frame> frames = new ArrayList<>();
        final boolean direct;
        private ByteBuffer handedOut;

        Collector(boolean direct) {
            this.direct = direct;
        }

        @Override
        public ByteBuffer payloadBuffer(RdsHeader header) {
            int len = (int) header.length();
            handedOut = direct ? ByteBuffer.allocateDirect(len) : ByteBuffer.allocate(len);
            return handedOut;
        }

        @Override
        public void onMessage(RdsHeader header, ByteBuffer payload) {
            assertSame(handedOut, payload, "onMessage gets the buffer payloadBuffer returned");
            assertEquals(header.length(), payload.position(), "position advanced by the payload length");
            byte[] p = new byte[(int) header.length()];
            payload.flip().get(p);
            ByteBuffer h = ByteBuffer.allocate(RdsHeader.SIZE);
            header.encode(h);
            frames.add(new Frame(h.array(), p));
        }
    }

    private static Frame frame(RdsHeader h, byte[] payload) {
        h.length(payload.length);
        ByteBuffer b = ByteBuffer.allocate(RdsHeader.SIZE);
        h.encode(b);
        return new Frame(b.array(), payload);
    }

    private static byte[] concat(List<Frame> frames) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (Frame f : frames) {
            out.writeBytes(f.header());
            out.writeBytes(f.payload());
        }
        return out.toByteArray();
    }

    /** Splits {@code stream} into chunks of random sizes: byte by byte, small, or large. */
    static List<byte[]> split(byte[] stream, Random rnd) {
        List<byte[]> chunks = new ArrayList<>();
        int pos = 0;
        while (pos < stream.length) {
            int bound;
            switch (rnd.nextInt(4)) {
                case 0: bound = 2; break;
                case 1: bound = 60; break;
                case 2: bound = 500; break;
                default: bound = 20000; break;
            }
            int n = Math.min(stream.length - pos, 1 + rnd.nextInt(bound));
            chunks.add(Arrays.copyOfRange(stream, pos, pos + n));
            pos += n;
        }
        return chunks;
    }

    /** Wraps a chunk in a buffer that does not start at offset 0 of its array, as real receive buffers do. */
    private static ByteBuffer offsetBuffer(byte[] chunk, Random rnd) {
        int pad = rnd.nextInt(8);
        byte[] backing = new byte[chunk.length + 2 * pad];
        System.arraycopy(chunk, 0, backing, pad, chunk.length);
        return ByteBuffer.wrap(backing, pad, chunk.length);
    }

    @Provide
    Arbitrary<Frame> anyFrame() {
        Arbitrary<Frame> data = Combinators.combine(Arbitraries.longs(), Arbitraries.integers().between(0, 0xFFFF),
                Arbitraries.integers().between(0, 0xFFFF), Arbitraries.integers().between(0, 0xFF),
                Arbitraries.bytes().array(byte[].class).ofSize(16),
                Arbitraries.bytes().array(byte[].class).ofMinSize(0).ofMaxSize(3000))
                .as((seq, sport, dport, flags, ext, payload) -> {
                    RdsHeader h = new RdsHeader().sequence(seq).sourcePort(sport).destinationPort(dport)
                            .flags(flags);
                    System.arraycopy(ext, 0, h.extensions(), 0, 16);
                    return frame(h, payload);
                });
        Arbitrary<Frame> empty = Arbitraries.longs().map(seq -> frame(new RdsHeader().sequence(seq).sourcePort(4030),
                new byte[0]));
        // The congestion map (protocol.md "Congestion maps"), seq 0, flags 0x01, 8192 bytes of bitmap
        Arbitrary<Frame> congMap = Arbitraries.integers().between(0, 0xFFFF).list().ofMaxSize(4).map(ports -> {
            byte[] bits = new byte[8192];
            for (int p : ports) {
                bits[p >>> 3] |= (byte) (1 << (p & 7));
            }
            return frame(new RdsHeader().flags(RdsHeader.FLAG_CONG_BITMAP), bits);
        });
        return Arbitraries.frequencyOf(net.jqwik.api.Tuple.of(5, data), net.jqwik.api.Tuple.of(2, empty),
                net.jqwik.api.Tuple.of(1, congMap));
    }

    /** The receiver must reassemble messages from chunks split at any offset, header or payload. */
    @Property(tries = 300)
    void anySplitOfAValidStreamDecodesToTheSameMessages(@ForAll @Size(max = 12) List<@net.jqwik.api.From("anyFrame") Frame> frames,
            @ForAll Random rnd, @ForAll boolean directPayload) throws RdsProtocolException {
        byte[] stream = concat(frames);
        FrameDecoder decoder = new FrameDecoder(CAP);
        Collector c = new Collector(directPayload);
        for (byte[] chunk : split(stream, rnd)) {
            ByteBuffer in = offsetBuffer(chunk, rnd);
            int limit = in.limit();
            decoder.decode(in, c);
            assertFalse(in.hasRemaining(), "decode consumes every byte it is given");
            assertEquals(limit, in.limit(), "the caller's limit is restored");
        }
        assertEquals(frames, c.frames);
        assertEquals(frames.size(), decoder.messages());
        assertFalse(decoder.inMessage());
        assertEquals(0, decoder.headerBytesReceived());
    }

    /**
     * A reader that puts payload bytes straight into the decoder's payload target ({@code decodedInPlace}), for any
     * split and any mix with ordinary decoding, gets the same messages, and is never offered more than the payload.
     */
    @Property(tries = 300)
    void payloadReadInPlaceDecodesToTheSameMessages(@ForAll @Size(max = 12) List<@net.jqwik.api.From("anyFrame") Frame> frames,
            @ForAll Random rnd) throws RdsProtocolException {
        byte[] stream = concat(frames);
        FrameDecoder decoder = new FrameDecoder(CAP);
        Collector c = new Collector(rnd.nextBoolean());
        int pos = 0;
        int inPlace = 0;
        while (pos < stream.length) {
            int n = Math.min(stream.length - pos, 1 + rnd.nextInt(rnd.nextBoolean() ? 60 : 5000));
            ByteBuffer t = decoder.payloadTarget();
            if (t != null && rnd.nextInt(3) > 0) {
                assertTrue(decoder.payloadRemaining() > 0 && decoder.payloadRemaining() <= t.remaining(),
                        "the target holds the rest of the payload");
                n = Math.min(n, decoder.payloadRemaining());
                t.put(t.position(), stream, pos, n);     // as a socket read would: the position stays
                decoder.decodedInPlace(n, c);
                inPlace += n;
            } else {
                decoder.decode(ByteBuffer.wrap(stream, pos, n), c);
            }
            pos += n;
        }
        assertEquals(frames, c.frames);
        assertFalse(decoder.inMessage());
        assertNull(decoder.payloadTarget(), "no target between messages");
        assertEquals(0, decoder.payloadRemaining());
        assertThrows(IllegalStateException.class, () -> decoder.decodedInPlace(1, c), "nothing to write in place");
        assertTrue(inPlace <= stream.length);
    }

    /** The same stream given whole, or one byte at a time, decodes the same (the two extremes of any cut). */
    @Property(tries = 50)
    void wholeAndBytewiseDecodingAgree(@ForAll @Size(max = 6) List<@net.jqwik.api.From("anyFrame") Frame> frames)
            throws RdsProtocolException {
        byte[] stream = concat(frames);
        Collector whole = new Collector(false);
        new FrameDecoder(CAP).decode(ByteBuffer.wrap(stream), whole);
        Collector bytewise = new Collector(false);
        FrameDecoder d = new FrameDecoder(CAP);
        for (byte b : stream) {
            d.decode(ByteBuffer.wrap(new byte[] {b}), bytewise);
        }
        assertEquals(frames, whole.frames);
        assertEquals(frames, bytewise.frames);
    }

    /** protocol.md "Known differences from the kernel": the kernel's receiver has no size check; ours refuses above its cap, and exactly the cap is fine. */
    @Property(tries = 200)
    void aHeaderAnnouncingMoreThanTheCapIsAProtocolError(@ForAll @IntRange(min = 0, max = 70000) int cap,
            @ForAll Random rnd) throws RdsProtocolException {
        long len = cap + 1 + (long) rnd.nextInt(1000);
        byte[] header = frame(new RdsHeader().sequence(1).sourcePort(4001).destinationPort(4000), new byte[0]).header();
        ByteBuffer.wrap(header).putInt(16, (int) len);
        FrameDecoder d = new FrameDecoder(cap);
        List<RdsHeader> asked = new ArrayList<>();
        FrameDecoder.Listener l = new FrameDecoder.Listener() {
            @Override
            public ByteBuffer payloadBuffer(RdsHeader h) {
                asked.add(h);
                return ByteBuffer.allocate((int) h.length());
            }

            @Override
            public void onMessage(RdsHeader h, ByteBuffer p) {
                fail("no message expected");
            }
        };
        List<byte[]> chunks = split(header, rnd);
        for (int i = 0; i < chunks.size() - 1; i++) {
            d.decode(ByteBuffer.wrap(chunks.get(i)), l);
        }
        assertThrows(RdsProtocolException.class, () -> d.decode(ByteBuffer.wrap(chunks.get(chunks.size() - 1)), l));
        assertTrue(asked.isEmpty(), "no payload buffer is requested for an oversized message");

        // exactly the cap is accepted
        Collector c = new Collector(false);
        new FrameDecoder(cap).decode(ByteBuffer.wrap(concat(List.of(frame(new RdsHeader(), new byte[cap])))), c);
        assertEquals(1, c.frames.size());
    }

    @Example
    void aLengthWithTheTopBitSetIsRefusedNotTakenAsNegative() {
        byte[] header = new byte[RdsHeader.SIZE];
        ByteBuffer.wrap(header).putInt(16, 0xFFFF_FFFF);
        RdsProtocolException e = assertThrows(RdsProtocolException.class,
                () -> new FrameDecoder(CAP).decode(ByteBuffer.wrap(header), new Collector(false)));
        assertTrue(e.getMessage().contains("4294967295"), e.getMessage());
    }

    /** A corrupt stream may only ever surface as RdsProtocolException (the connection is then dropped). */
    @Property(tries = 1000)
    void decodingArbitraryBytesThrowsNothingButRdsProtocolException(
            @ForAll @Size(max = 3000) byte[] junk, @ForAll @IntRange(min = 0, max = 4096) int cap, @ForAll Random rnd,
            @ForAll boolean skipPayloads) {
        FrameDecoder d = new FrameDecoder(cap);
        FrameDecoder.Listener l = new FrameDecoder.Listener() {
            @Override
            public ByteBuffer payloadBuffer(RdsHeader h) {
                assertTrue(h.length() <= cap);
                return skipPayloads ? null : ByteBuffer.allocate((int) h.length());
            }

            @Override
            public void onMessage(RdsHeader h, ByteBuffer p) {
            }
        };
        try {
            for (byte[] chunk : split(junk, rnd)) {
                d.decode(ByteBuffer.wrap(chunk), l);
            }
        } catch (RdsProtocolException expected) {
            // the only permitted failure
        }
    }

    /** A listener may discard a payload (e.g. a message for an unbound port) by returning null. */
    @Property(tries = 200)
    void aNullPayloadBufferSkipsThePayloadBytes(@ForAll @Size(max = 10) List<@net.jqwik.api.From("anyFrame") Frame> frames,
            @ForAll Random rnd) throws RdsProtocolException {
        boolean[] skip = new boolean[frames.size()];
        for (int i = 0; i < skip.length; i++) {
            skip[i] = rnd.nextBoolean();
        }
        List<Frame> got = new ArrayList<>();
        int[] index = {0};
        FrameDecoder.Listener l = new FrameDecoder.Listener() {
            @Override
            public ByteBuffer payloadBuffer(RdsHeader h) {
                return skip[index[0]] ? null : ByteBuffer.allocate((int) h.length());
            }

            @Override
            public void onMessage(RdsHeader h, ByteBuffer p) {
                ByteBuffer hb = ByteBuffer.allocate(RdsHeader.SIZE);
                h.encode(hb);
                if (skip[index[0]]) {
                    assertNull(p);
                    got.add(new Frame(hb.array(), new byte[0]));
                } else {
                    got.add(new Frame(hb.array(), Arrays.copyOf(p.array(), p.position())));
                }
                index[0]++;
            }
        };
        FrameDecoder d = new FrameDecoder(CAP);
        for (byte[] chunk : split(concat(frames), rnd)) {
            d.decode(ByteBuffer.wrap(chunk), l);
        }
        assertEquals(frames.size(), got.size());
        for (int i = 0; i < frames.size(); i++) {
            assertArrayEquals(frames.get(i).header(), got.get(i).header());
            assertArrayEquals(skip[i] ? new byte[0] : frames.get(i).payload(), got.get(i).payload());
        }
    }

    /** The payload is written from the buffer's position; the bytes around it are left alone. */
    @Example
    void payloadIsWrittenAtTheDestinationsPosition() throws RdsProtocolException {
        byte[] payload = {1, 2, 3, 4, 5};
        ByteBuffer dst = ByteBuffer.allocate(20);
        dst.position(7);
        FrameDecoder.Listener l = new FrameDecoder.Listener() {
            @Override
            public ByteBuffer payloadBuffer(RdsHeader h) {
                return dst;
            }

            @Override
            public void onMessage(RdsHeader h, ByteBuffer p) {
                assertSame(dst, p);
            }
        };
        new FrameDecoder(CAP).decode(ByteBuffer.wrap(concat(List.of(frame(new RdsHeader(), payload)))), l);
        assertEquals(12, dst.position());
        assertArrayEquals(new byte[] {0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 0, 0, 0, 0, 0, 0, 0, 0}, dst.array());
    }

    /** The header and payload still to come (net/rds/tcp_recv.c): partial state is visible byte by byte through a header and a payload. */
    @Example
    void headerBytesReceivedAndInMessageReportPartialState() throws RdsProtocolException {
        byte[] stream = concat(List.of(frame(new RdsHeader().sequence(7), new byte[10]),
                frame(new RdsHeader().sequence(8), new byte[0])));
        FrameDecoder d = new FrameDecoder(CAP);
        Collector c = new Collector(false);
        assertFalse(d.inMessage());
        assertEquals(0, d.headerBytesReceived());
        for (int i = 0; i < stream.length; i++) {
            d.decode(ByteBuffer.wrap(stream, i, 1), c);
            int consumed = i + 1;
            if (consumed < 48) {
                assertEquals(consumed, d.headerBytesReceived(), "in the first header at " + consumed);
                assertTrue(d.inMessage());
                assertEquals(0, d.messages());
            } else if (consumed < 58) {
                assertEquals(48, d.headerBytesReceived(), "in the first payload at " + consumed);
                assertTrue(d.inMessage());
                assertEquals(0, d.messages());
            } else if (consumed == 58) {
                assertEquals(0, d.headerBytesReceived());
                assertFalse(d.inMessage());
                assertEquals(1, d.messages());
            } else if (consumed < 58 + 48) {
                assertEquals(consumed - 58, d.headerBytesReceived(), "in the second header at " + consumed);
                assertTrue(d.inMessage());
            } else {
                // a zero-length message completes with its header
                assertEquals(0, d.headerBytesReceived());
                assertFalse(d.inMessage());
                assertEquals(2, d.messages());
            }
        }
        assertEquals(List.of(7L, 8L), c.frames.stream().map(f -> f.decoded().sequence()).toList());
    }

    /** A header that ends exactly at a chunk boundary leaves the decoder waiting for the payload. */
    @Example
    void aHeaderEndingAtTheChunkBoundaryAwaitsItsPayload() throws RdsProtocolException {
        byte[] stream = concat(List.of(frame(new RdsHeader(), new byte[] {9, 9, 9})));
        FrameDecoder d = new FrameDecoder(CAP);
        Collector c = new Collector(false);
        d.decode(ByteBuffer.wrap(stream, 0, 48), c);
        assertTrue(d.inMessage());
        assertEquals(48, d.headerBytesReceived());
        assertTrue(c.frames.isEmpty());
        d.decode(ByteBuffer.allocate(0), c);
        assertTrue(c.frames.isEmpty(), "an empty buffer changes nothing");
        d.decode(ByteBuffer.wrap(stream, 48, 3), c);
        assertEquals(1, c.frames.size());
        assertArrayEquals(new byte[] {9, 9, 9}, c.frames.get(0).payload());
    }

    /** A listener's RdsProtocolException propagates out of decode. */
    @Example
    void aListenerRefusalPropagates() {
        byte[] stream = concat(List.of(frame(new RdsHeader(), new byte[0])));
        FrameDecoder.Listener l = new FrameDecoder.Listener() {
            @Override
            public ByteBuffer payloadBuffer(RdsHeader h) {
                return null;
            }

            @Override
            public void onMessage(RdsHeader h, ByteBuffer p) throws RdsProtocolException {
                throw new RdsProtocolException("refused");
            }
        };
        RdsProtocolException e = assertThrows(RdsProtocolException.class,
                () -> new FrameDecoder(CAP).decode(ByteBuffer.wrap(stream), l));
        assertEquals("refused", e.getMessage());
    }

    /**
     * The byte order of the caller's buffer must not matter (the wire is big-endian). BUG: the decoder reads
     * whole headers straight from the caller's buffer in that buffer's order, but split headers from its own
     * big-endian copy, so a little-endian receive buffer decodes the same bytes differently depending on where
     * the TCP segments happened to be cut.
     */
    @Example
    void decodingDoesNotDependOnTheCallersByteOrder() throws RdsProtocolException {
        List<Frame> frames = List.of(frame(new RdsHeader().sequence(1).sourcePort(4001).destinationPort(4000),
                new byte[] {1, 2, 3}), frame(new RdsHeader().sequence(2).sourcePort(4001).destinationPort(4000),
                new byte[0]));
        byte[] stream = concat(frames);

        Collector whole = new Collector(false);
        assertDoesNotThrow(() -> new FrameDecoder(CAP).decode(ByteBuffer.wrap(stream).order(ByteOrder.LITTLE_ENDIAN),
                whole), "little-endian buffer, whole headers: h_len read byte-swapped");
        assertEquals(frames, whole.frames, "little-endian buffer, whole headers");

        Collector split = new Collector(false);
        FrameDecoder d = new FrameDecoder(CAP);
        d.decode(ByteBuffer.wrap(stream, 0, 20).order(ByteOrder.LITTLE_ENDIAN), split);
        d.decode(ByteBuffer.wrap(stream, 20, stream.length - 20).order(ByteOrder.LITTLE_ENDIAN), split);
        assertEquals(frames, split.frames, "little-endian buffer, split header");
    }
}
