package org.rds4j.core.wire;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;

/**
 * Encodes the header of each message a transmit pass writes into one reused 48-byte buffer, field by field, with no
 * {@link RdsHeader} in between: the same bytes as filling a cleared {@code RdsHeader} and encoding it, at a fraction
 * of the work (that round trip, with its zero-fill, its byte-order switch and a bounds-checked put per field, cost a
 * sixth of the core's time to send a 64-byte message in {@code EnqueueTransmitBenchmark}: docs/threading.md).
 *
 * <p>h_credit, h_padding and h_csum are always 0, as over TCP; the extension area is the message's or zeros. One
 * owner, under the path's monitor: the path's transmitter, or its congestion frames (whose header never changes).
 */
public final class HeaderEncoder {
    private static final VarHandle LONG = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);
    private static final VarHandle INT = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.BIG_ENDIAN);
    private static final VarHandle SHORT = MethodHandles.byteArrayViewVarHandle(short[].class, ByteOrder.BIG_ENDIAN);
    private static final VarHandle BUFFER_LONG =
            MethodHandles.byteBufferViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);

    private final byte[] bytes = new byte[RdsHeader.SIZE];
    /** Always position 0, limit 48: sinks copy its remaining bytes and leave the position as it was. */
    private final ByteBuffer buffer = ByteBuffer.wrap(bytes);
    /** Whether the extension area holds a previous message's extensions, to be zeroed for one without. */
    private boolean extensionsSet;

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
        byte[] b = bytes;
        LONG.set(b, 0, sequence);
        LONG.set(b, 8, ack);
        INT.set(b, 16, length);
        SHORT.set(b, 20, (short) sourcePort);
        SHORT.set(b, 22, (short) destinationPort);
        b[24] = (byte) flags;
        // h_credit, h_padding and h_csum (bytes 25 to 31) are never written: zero since the array was made.
        if (extensions != null) {
            System.arraycopy(extensions, 0, b, RdsHeader.EXTHDR_OFFSET, RdsHeader.EXTHDR_SIZE);
            extensionsSet = true;
        } else if (extensionsSet) {
            Arrays.fill(b, RdsHeader.EXTHDR_OFFSET, RdsHeader.SIZE, (byte) 0);
            extensionsSet = false;
        }
    }

    /**
     * Encodes a whole header with no extensions straight into {@code dst} at {@code at}, all 48 bytes (a claimed
     * region holds whatever was there before): the same bytes as {@link #encode} with {@code null} extensions. Six
     * absolute puts, so the frame's header needs no copy of its own.
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
