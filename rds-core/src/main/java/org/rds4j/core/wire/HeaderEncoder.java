package org.rds4j.core.wire;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Encodes the header of each message a transmit pass writes, field by field into one reused 48-byte buffer or
 * straight into a transport's own ({@link #encodeInto}), with no {@link RdsHeader} in between: the same bytes as
 * filling a cleared {@code RdsHeader} and encoding it, at a fraction of the work (that round trip, with its
 * zero-fill, its byte-order switch and a bounds-checked put per field, cost a sixth of the core's time to send a
 * 64-byte message in {@code EnqueueTransmitBenchmark}).
 *
 * <p>h_credit, h_padding and h_csum are always 0, as over TCP; the extension area is the message's or zeros. One
 * owner, on the path's I/O thread: the path's transmitter, or its congestion frames (whose header never changes).
 */
public final class HeaderEncoder {
    private static final VarHandle BUFFER_LONG =
            MethodHandles.byteBufferViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);

    private final byte[] bytes = new byte[RdsHeader.SIZE];
    /** Always position 0, limit 48: sinks copy its remaining bytes and leave the position as it was. */
    private final ByteBuffer buffer = ByteBuffer.wrap(bytes);

    /**
     * Encodes one header; the result is {@link #buffer()} until the next call.
     *
     * @param sequence h_sequence
     * @param ack h_ack
     * @param length h_len, the payload's length
     * @param sourcePort h_sport, 0 to 65535
     * @param destinationPort h_dport, 0 to 65535
     * @param flags h_flags, 0 to 255
     * @param extensions the 16-byte extension area, or {@code null} for zeros
     */
    public void encode(long sequence, long ack, int length, int sourcePort, int destinationPort, int flags,
                       byte[] extensions) {
        encodeInto(buffer, 0, sequence, ack, length, sourcePort, destinationPort, flags);
        if (extensions != null) {
            System.arraycopy(extensions, 0, bytes, RdsHeader.EXTHDR_OFFSET, RdsHeader.EXTHDR_SIZE);
        }
    }

    /**
     * Encodes a whole header with no extensions into {@code dst} at {@code at}, all 48 bytes (a claimed region, or
     * this encoder's buffer, holds whatever was there before): six absolute puts. The one place that knows where the
     * fields lie; {@link #encode} uses it too, then adds the extension area.
     *
     * @param dst where the frame goes; its position and limit are not used or changed
     * @param at the index of the header's first byte
     * @param sequence h_sequence
     * @param ack h_ack
     * @param length h_len
     * @param sourcePort h_sport
     * @param destinationPort h_dport
     * @param flags h_flags
     */
    public static void encodeInto(ByteBuffer dst, int at, long sequence, long ack, int length, int sourcePort,
                                  int destinationPort, int flags) {
        BUFFER_LONG.set(dst, at, sequence);
        BUFFER_LONG.set(dst, at + 8, ack);
        BUFFER_LONG.set(dst, at + 16, (long) length << 32 | (sourcePort & 0xFFFFL) << 16 | (destinationPort & 0xFFFFL));
        BUFFER_LONG.set(dst, at + 24, (long) (flags & 0xFF) << 56);   // h_flags, then h_credit, padding, csum: 0
        BUFFER_LONG.set(dst, at + RdsHeader.EXTHDR_OFFSET, 0L);
        BUFFER_LONG.set(dst, at + RdsHeader.EXTHDR_OFFSET + 8, 0L);
    }

    /**
     * The header last encoded.
     *
     * @return a buffer at position 0 with 48 bytes remaining, reused by the next {@link #encode}
     */
    public ByteBuffer buffer() {
        return buffer;
    }
}
