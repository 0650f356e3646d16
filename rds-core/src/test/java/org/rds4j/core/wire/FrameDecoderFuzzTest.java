package org.rds4j.core.wire;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Coverage-guided fuzzing of what a peer's bytes meet first: {@link FrameDecoder} and {@link RdsHeader} (docs/security.md,
 * "Fuzzing"). A peer controls every byte of the stream and TCP decides where it is cut, so the fuzzer chooses both: the
 * stream, the cut points, the cap on {@code h_len}, and which payloads the listener skips.
 *
 * <p>The oracle is a second, deliberately naive reading of the same stream ({@link #reference}: walk header, length,
 * payload over the whole array). The decoder, fed the stream whole and fed it in pieces, must agree with it on every
 * message, on where a too-long {@code h_len} stops the stream, and on what is left half-received. It may throw only
 * {@link RdsProtocolException}, and only for an {@code h_len} above its cap; it must never ask the listener for a
 * buffer larger than the cap, which is what bounds a hostile peer's allocation per connection.
 *
 * <p>In the default build this runs over the committed inputs in {@code FrameDecoderFuzzTestInputs} (regression);
 * {@code -Pfuzz} fuzzes it (docs/security.md, "Fuzzing"). 
 */
class FrameDecoderFuzzTest {
    /** Caps to decode under: none, tiny, one header, a congestion map, and the stack's own 1 MiB. */
    static final long[] CAPS = {0, 1, RdsHeader.SIZE, 8192, 1 << 20};

    /** What one decoding produced. */
    record Decoded(List<byte[]> headers, List<byte[]> payloads, int errorAt, boolean inMessage,
                   int headerBytesReceived, long messages) {
        void assertSame(Decoded other, String what) {
            assertEquals(other.headers.size(), headers.size(), what + ": number of messages");
            for (int i = 0; i < headers.size(); i++) {
                assertArrayEquals(other.headers.get(i), headers.get(i), what + ": header of message " + i);
                assertArrayEquals(other.payloads.get(i), payloads.get(i), what + ": payload of message " + i);
            }
            assertEquals(other.errorAt, errorAt, what + ": the message whose h_len was refused (-1: none)");
            if (errorAt < 0) {
                assertEquals(other.inMessage, inMessage, what + ": a message partly received");
                assertEquals(other.headerBytesReceived, headerBytesReceived, what + ": header bytes received");
                assertEquals(other.messages, messages, what + ": messages()");
            }
        }
    }

    @FuzzTest
    void decodeStreamCutAnywhere(FuzzedDataProvider data) {
        long cap = CAPS[data.consumeInt(0, CAPS.length - 1)];
        int[] cuts = new int[data.consumeInt(0, 12)];
        for (int i = 0; i < cuts.length; i++) {
            cuts[i] = data.consumeInt(0, 300);
        }
        boolean direct = data.consumeBoolean();
        boolean littleEndian = data.consumeBoolean();
        int skipMask = data.consumeInt();
        byte[] stream = data.consumeRemainingAsBytes();

        Decoded expected = reference(stream, cap, skipMask);
        decode(stream, cap, new int[0], false, false, skipMask).assertSame(expected, "whole stream");
        decode(stream, cap, cuts, direct, littleEndian, skipMask).assertSame(expected, "stream cut at "
                + Arrays.toString(cuts) + (direct ? ", direct" : ", heap") + (littleEndian ? ", little-endian" : ""));
    }

    @FuzzTest
    void headerRoundTrip(byte[] bytes) {
        RdsHeader h = new RdsHeader();
        if (bytes.length < RdsHeader.SIZE) {
            assertThrows(IllegalArgumentException.class, () -> h.decode(ByteBuffer.wrap(bytes)));
            return;
        }
        ByteBuffer src = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
        h.decode(src);
        assertEquals(RdsHeader.SIZE, src.position(), "decode reads exactly 48 bytes");
        assertEquals(ByteOrder.LITTLE_ENDIAN, src.order(), "decode leaves the buffer's byte order alone");
        ByteBuffer out = ByteBuffer.allocate(RdsHeader.SIZE).order(ByteOrder.LITTLE_ENDIAN);
        h.encode(out);
        assertArrayEquals(Arrays.copyOf(bytes, RdsHeader.SIZE), out.array(), "any 48 bytes pass through unchanged");

        // The setters accept every value the decoder produces, and a copy is equal in every field.
        RdsHeader viaSetters = new RdsHeader().sequence(h.sequence()).ack(h.ack()).length(h.length())
                .sourcePort(h.sourcePort()).destinationPort(h.destinationPort()).flags(h.flags())
                .credit(h.credit()).padding(h.padding()).checksum(h.checksum());
        System.arraycopy(h.extensions(), 0, viaSetters.extensions(), 0, RdsHeader.EXTHDR_SIZE);
        assertEquals(h, viaSetters);
        assertEquals(h.hashCode(), new RdsHeader().set(h).hashCode());
        assertTrue(h.length() >= 0 && h.length() <= 0xFFFF_FFFFL, "h_len is unsigned 32-bit");
        assertEquals(h.flags() == RdsHeader.FLAG_CONG_BITMAP, h.isCongestionMap(), "a map is flags == 0x01 exactly");
        assertTrue(h.toString().startsWith("RdsHeader["));
    }

    /** Decodes {@code stream} cut into pieces of the given sizes (the rest in one piece), as a connection would. */
    static Decoded decode(byte[] stream, long cap, int[] cuts, boolean direct, boolean littleEndian, int skipMask) {
        FrameDecoder decoder = new FrameDecoder(cap);
        Collecting listener = new Collecting(cap, skipMask);
        int off = 0;
        int errorAt = -1;
        for (int i = 0; i <= cuts.length && errorAt < 0; i++) {
            int n = i < cuts.length ? Math.min(cuts[i], stream.length - off) : stream.length - off;
            int pad = i % 5;                                 // a buffer whose bytes do not start at 0
            ByteBuffer in = direct ? ByteBuffer.allocateDirect(pad + n) : ByteBuffer.allocate(pad + n);
            in.order(littleEndian ? ByteOrder.LITTLE_ENDIAN : ByteOrder.BIG_ENDIAN);
            in.position(pad);
            in.put(stream, off, n).position(pad);
            off += n;
            try {
                decoder.decode(in, listener);
                assertEquals(0, in.remaining(), "decode consumes every byte it is given");
            } catch (RdsProtocolException e) {
                errorAt = listener.headers.size();     // the reference says whether this h_len was above the cap
                assertTrue(e.getMessage().contains("more than the " + cap), e.getMessage());
            }
            assertEquals(littleEndian ? ByteOrder.LITTLE_ENDIAN : ByteOrder.BIG_ENDIAN, in.order(),
                    "the input buffer's byte order is left alone");
        }
        return new Decoded(listener.headers, listener.payloads, errorAt, decoder.inMessage(),
                decoder.headerBytesReceived(), decoder.messages());
    }

    /** The naive reading: whole headers and payloads, front to back, stopping at a refused h_len. */
    static Decoded reference(byte[] stream, long cap, int skipMask) {
        List<byte[]> headers = new ArrayList<>();
        List<byte[]> payloads = new ArrayList<>();
        int off = 0;
        boolean inMessage = false;
        int headerBytes = 0;
        while (off < stream.length) {
            if (stream.length - off < RdsHeader.SIZE) {
                inMessage = true;
                headerBytes = stream.length - off;
                break;
            }
            long len = ByteBuffer.wrap(stream, off + 16, 4).getInt() & 0xFFFF_FFFFL;
            if (len > cap) {
                return new Decoded(headers, payloads, headers.size(), false, 0, headers.size());
            }
            if (stream.length - off - RdsHeader.SIZE < len) {
                inMessage = true;
                headerBytes = RdsHeader.SIZE;
                break;
            }
            headers.add(Arrays.copyOfRange(stream, off, off + RdsHeader.SIZE));
            int index = payloads.size();
            payloads.add(skipped(skipMask, index) ? null
                    : Arrays.copyOfRange(stream, off + RdsHeader.SIZE, off + RdsHeader.SIZE + (int) len));
            off += RdsHeader.SIZE + (int) len;
        }
        return new Decoded(headers, payloads, -1, inMessage, headerBytes, headers.size());
    }

    static boolean skipped(int skipMask, int index) {
        return (skipMask >>> (index & 31) & 1) != 0;
    }

    /** Gives payload buffers of exactly h_len bytes (or none), and records what completes. */
    static final class Collecting implements FrameDecoder.Listener {
        final long cap;
        final int skipMask;
        final List<byte[]> headers = new ArrayList<>();
        final List<byte[]> payloads = new ArrayList<>();
        private final ByteBuffer headerBytes = ByteBuffer.allocate(RdsHeader.SIZE);
        private ByteBuffer given;
        private boolean asked;

        Collecting(long cap, int skipMask) {
            this.cap = cap;
            this.skipMask = skipMask;
        }

        @Override
        public ByteBuffer payloadBuffer(RdsHeader header) {
            long len = header.length();
            if (len > cap) {
                throw new AssertionError("the decoder asked for a " + len + "-byte buffer, above its cap of " + cap);
            }
            asked = true;
            given = skipped(skipMask, headers.size()) ? null : ByteBuffer.allocate((int) len);
            return given;
        }

        @Override
        public void onMessage(RdsHeader header, ByteBuffer payload) {
            assertTrue(asked, "a message completed without its payload buffer being asked for");
            asked = false;
            assertSame(given, payload, "the payload is the buffer the listener gave");
            headerBytes.clear();
            header.encode(headerBytes);
            headers.add(headerBytes.array().clone());
            if (payload == null) {
                payloads.add(null);
            } else {
                assertEquals(header.length(), payload.position(), "the payload buffer is filled to h_len");
                payloads.add(payload.array().clone());
            }
        }
    }
}
