package org.rds4j.core.wire;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;

/**
 * The 48-byte header in front of every RDS message, the kernel's {@code struct rds_header}. All multi-byte fields are
 * big-endian on the wire:
 *
 * <pre>
 *  0  h_sequence  u64      per-path sequence number (0 for congestion maps)
 *  8  h_ack       u64      0 over TCP
 * 16  h_len       u32      payload length, header excluded
 * 20  h_sport     u16      sender's RDS port
 * 22  h_dport     u16      destination RDS port
 * 24  h_flags     u8       {@link #FLAG_CONG_BITMAP}, {@link #FLAG_ACK_REQUIRED}, {@link #FLAG_RETRANSMITTED}
 * 25  h_credit    u8       0 over TCP
 * 26  h_padding   4 bytes  0
 * 30  h_csum      u16      0 over TCP, never verified
 * 32  h_exthdr    16 bytes extension headers, see {@link ExtensionHeaders}
 * </pre>
 *
 * <p>A mutable holder, so that a decoder and an encoder can each reuse one instance for every message instead of
 * allocating. Unsigned fields are held in wider Java types ({@code h_len} as a {@code long}); {@code h_sequence} and
 * {@code h_ack} use all 64 bits of a {@code long}, compared with {@link Long#compareUnsigned}. Decoding accepts any
 * 48 bytes and encoding reproduces them exactly, so a header passes through rds4j unchanged.
 */
public final class RdsHeader {
    public static final int SIZE = 48;
    public static final int EXTHDR_OFFSET = 32;
    public static final int EXTHDR_SIZE = 16;

    /** The payload is a congestion bitmap; the receiver tests {@code h_flags == FLAG_CONG_BITMAP} exactly. */
    public static final int FLAG_CONG_BITMAP = 0x01;
    /** Ask the receiver to acknowledge soon; the kernel's TCP transport never puts it on the wire. */
    public static final int FLAG_ACK_REQUIRED = 0x02;
    /** The message is being sent again after its path was reset. */
    public static final int FLAG_RETRANSMITTED = 0x04;
    /** Post-6.1 kernels: more extension headers follow (InfiniBand only). */
    public static final int FLAG_EXTHDR_EXTENSION = 0x20;

    private long sequence;
    private long ack;
    private long length;
    private int sourcePort;
    private int destinationPort;
    private int flags;
    private int credit;
    private int padding;
    private int checksum;
    private final byte[] extensions = new byte[EXTHDR_SIZE];

    /**
     * Reads 48 bytes from {@code src} (advancing its position) into this header. The wire is big-endian whatever
     * the buffer's byte order, which is left as it was.
     */
    public RdsHeader decode(ByteBuffer src) {
        if (src.remaining() < SIZE) {
            throw new IllegalArgumentException("an RDS header needs 48 bytes, " + src.remaining() + " remain");
        }
        ByteOrder order = src.order();
        src.order(ByteOrder.BIG_ENDIAN);
        try {
            decodeBigEndian(src);
        } finally {
            src.order(order);
        }
        return this;
    }

    private void decodeBigEndian(ByteBuffer src) {
        sequence = src.getLong();
        ack = src.getLong();
        length = Integer.toUnsignedLong(src.getInt());
        sourcePort = Short.toUnsignedInt(src.getShort());
        destinationPort = Short.toUnsignedInt(src.getShort());
        flags = Byte.toUnsignedInt(src.get());
        credit = Byte.toUnsignedInt(src.get());
        padding = src.getInt();
        checksum = Short.toUnsignedInt(src.getShort());
        src.get(extensions);
    }

    /** Writes this header's 48 bytes to {@code dst}, big-endian whatever its byte order, advancing its position. */
    public void encode(ByteBuffer dst) {
        ByteOrder order = dst.order();
        dst.order(ByteOrder.BIG_ENDIAN);
        try {
            encodeBigEndian(dst);
        } finally {
            dst.order(order);
        }
    }

    private void encodeBigEndian(ByteBuffer dst) {
        dst.putLong(sequence);
        dst.putLong(ack);
        dst.putInt((int) length);
        dst.putShort((short) sourcePort);
        dst.putShort((short) destinationPort);
        dst.put((byte) flags);
        dst.put((byte) credit);
        dst.putInt(padding);
        dst.putShort((short) checksum);
        dst.put(extensions);
    }

    /** Resets every field to zero, as the kernel's zero-filled message allocation does. */
    public RdsHeader clear() {
        sequence = 0;
        ack = 0;
        length = 0;
        sourcePort = 0;
        destinationPort = 0;
        flags = 0;
        credit = 0;
        padding = 0;
        checksum = 0;
        Arrays.fill(extensions, (byte) 0);
        return this;
    }

    /** Copies every field of {@code other} into this header. */
    public RdsHeader set(RdsHeader other) {
        sequence = other.sequence;
        ack = other.ack;
        length = other.length;
        sourcePort = other.sourcePort;
        destinationPort = other.destinationPort;
        flags = other.flags;
        credit = other.credit;
        padding = other.padding;
        checksum = other.checksum;
        System.arraycopy(other.extensions, 0, extensions, 0, EXTHDR_SIZE);
        return this;
    }

    public long sequence() {
        return sequence;
    }

    public RdsHeader sequence(long value) {
        this.sequence = value;
        return this;
    }

    public long ack() {
        return ack;
    }

    public RdsHeader ack(long value) {
        this.ack = value;
        return this;
    }

    /** h_len, the payload length: an unsigned 32-bit value. */
    public long length() {
        return length;
    }

    public RdsHeader length(long value) {
        if (value < 0 || value > 0xFFFF_FFFFL) {
            throw new IllegalArgumentException("h_len is an unsigned 32-bit field, not " + value);
        }
        this.length = value;
        return this;
    }

    public int sourcePort() {
        return sourcePort;
    }

    public RdsHeader sourcePort(int port) {
        this.sourcePort = u16(port, "h_sport");
        return this;
    }

    public int destinationPort() {
        return destinationPort;
    }

    public RdsHeader destinationPort(int port) {
        this.destinationPort = u16(port, "h_dport");
        return this;
    }

    public int flags() {
        return flags;
    }

    public RdsHeader flags(int value) {
        this.flags = u8(value, "h_flags");
        return this;
    }

    public boolean hasFlag(int flag) {
        return (flags & flag) != 0;
    }

    /** Whether this is a congestion-map message: the kernel tests the flags for equality, not for the bit. */
    public boolean isCongestionMap() {
        return flags == FLAG_CONG_BITMAP;
    }

    public int credit() {
        return credit;
    }

    public RdsHeader credit(int value) {
        this.credit = u8(value, "h_credit");
        return this;
    }

    /** The four padding bytes as one big-endian int. */
    public int padding() {
        return padding;
    }

    public RdsHeader padding(int value) {
        this.padding = value;
        return this;
    }

    public int checksum() {
        return checksum;
    }

    public RdsHeader checksum(int value) {
        this.checksum = u16(value, "h_csum");
        return this;
    }

    /** The 16-byte extension area itself (not a copy); see {@link ExtensionHeaders} to read and add entries. */
    public byte[] extensions() {
        return extensions;
    }

    private static int u16(int v, String field) {
        if (v < 0 || v > 0xFFFF) {
            throw new IllegalArgumentException(field + " is an unsigned 16-bit field, not " + v);
        }
        return v;
    }

    private static int u8(int v, String field) {
        if (v < 0 || v > 0xFF) {
            throw new IllegalArgumentException(field + " is an unsigned 8-bit field, not " + v);
        }
        return v;
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof RdsHeader)) {
            return false;
        }
        RdsHeader h = (RdsHeader) o;
        return sequence == h.sequence && ack == h.ack && length == h.length && sourcePort == h.sourcePort
                && destinationPort == h.destinationPort && flags == h.flags && credit == h.credit
                && padding == h.padding && checksum == h.checksum && Arrays.equals(extensions, h.extensions);
    }

    @Override
    public int hashCode() {
        return Long.hashCode(sequence) * 31 + sourcePort * 17 + destinationPort + (int) length;
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder(160);
        sb.append("RdsHeader[seq=").append(Long.toUnsignedString(sequence))
                .append(", ack=").append(Long.toUnsignedString(ack))
                .append(", len=").append(length)
                .append(", sport=").append(sourcePort)
                .append(", dport=").append(destinationPort)
                .append(", flags=0x").append(Integer.toHexString(flags));
        if (credit != 0 || padding != 0 || checksum != 0) {
            sb.append(", credit=").append(credit).append(", padding=0x").append(Integer.toHexString(padding))
                    .append(", csum=0x").append(Integer.toHexString(checksum));
        }
        if (extensions[0] != 0) {
            sb.append(", ext=").append(ExtensionHeaders.describe(extensions));
        }
        return sb.append(']').toString();
    }
}
