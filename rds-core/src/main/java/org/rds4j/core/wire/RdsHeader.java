package org.rds4j.core.wire;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
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
    /** The header's size in bytes, extension area included. */
    public static final int SIZE = 48;
    /** Where the extension area {@code h_exthdr} starts within the header. */
    public static final int EXTHDR_OFFSET = 32;
    /** The extension area's size in bytes ({@code RDS_HEADER_EXT_SPACE}). */
    public static final int EXTHDR_SIZE = 16;
    /** The extension area as two big-endian longs, as {@link #decode} reads it. */
    private static final VarHandle EXTENSION_LONGS =
            MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);

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
     *
     * @param src the buffer to read from; at least 48 bytes must remain
     * @return this header
     * @throws IllegalArgumentException if fewer than 48 bytes remain
     */
    public RdsHeader decode(ByteBuffer src) {
        if (src.remaining() < SIZE) {
            throw new IllegalArgumentException("an RDS header needs 48 bytes, " + src.remaining() + " remain");
        }
        ByteOrder order = src.order();
        if (order == ByteOrder.BIG_ENDIAN) {
            decodeBigEndian(src);                   // the transports' buffers: no order to switch and restore
            return this;
        }
        src.order(ByteOrder.BIG_ENDIAN);
        try {
            decodeBigEndian(src);
        } finally {
            src.order(order);
        }
        return this;
    }

    /**
     * Six absolute long reads at the header's fixed offsets, the fields cut out of them with shifts, and one position
     * move at the end: every received message passes here on its I/O thread, and each read of a direct buffer runs
     * its index and scope checks (eleven relative reads, then eleven absolute ones, cost more).
     */
    private void decodeBigEndian(ByteBuffer src) {
        int p = src.position();
        sequence = src.getLong(p);
        ack = src.getLong(p + 8);
        long lenPorts = src.getLong(p + 16);            // h_len, h_sport, h_dport
        length = lenPorts >>> 32;
        sourcePort = (int) (lenPorts >>> 16) & 0xFFFF;
        destinationPort = (int) lenPorts & 0xFFFF;
        long rest = src.getLong(p + 24);                // h_flags, h_credit, h_padding, h_csum
        flags = (int) (rest >>> 56);
        credit = (int) (rest >>> 48) & 0xFF;
        padding = (int) (rest >>> 16);
        checksum = (int) rest & 0xFFFF;
        // Two long reads rather than a bulk copy of 16 bytes, whose range and scope checks cost more than the copy.
        EXTENSION_LONGS.set(extensions, 0, src.getLong(p + 32));
        EXTENSION_LONGS.set(extensions, 8, src.getLong(p + 40));
        src.position(p + SIZE);
    }

    /**
     * Writes this header's 48 bytes to {@code dst}, big-endian whatever its byte order, advancing its position.
     *
     * @param dst the buffer to write to; at least 48 bytes must remain
     */
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

    /**
     * Resets every field to zero, as the kernel's zero-filled message allocation does.
     *
     * @return this header
     */
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

    /**
     * Copies every field of {@code other} into this header.
     *
     * @param other the header to copy, left unchanged
     * @return this header
     */
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

    /**
     * h_sequence, the per-path sequence number; 0 for congestion maps.
     *
     * @return the sequence number, all 64 bits used (compare with {@link Long#compareUnsigned})
     */
    public long sequence() {
        return sequence;
    }

    /**
     * Sets h_sequence.
     *
     * @param value the sequence number, read as unsigned 64-bit
     * @return this header
     */
    public RdsHeader sequence(long value) {
        this.sequence = value;
        return this;
    }

    /**
     * h_ack, the highest sequence number acknowledged; 0 over TCP.
     *
     * @return the acknowledgement, all 64 bits used
     */
    public long ack() {
        return ack;
    }

    /**
     * Sets h_ack.
     *
     * @param value the acknowledgement, read as unsigned 64-bit
     * @return this header
     */
    public RdsHeader ack(long value) {
        this.ack = value;
        return this;
    }

    /**
     * h_len, the payload length: an unsigned 32-bit value.
     *
     * @return the payload length in bytes, header excluded
     */
    public long length() {
        return length;
    }

    /**
     * Sets h_len.
     *
     * @param value the payload length in bytes, 0 to 2<sup>32</sup>-1
     * @return this header
     * @throws IllegalArgumentException if {@code value} does not fit in 32 unsigned bits
     */
    public RdsHeader length(long value) {
        if (value < 0 || value > 0xFFFF_FFFFL) {
            throw new IllegalArgumentException("h_len is an unsigned 32-bit field, not " + value);
        }
        this.length = value;
        return this;
    }

    /**
     * h_sport, the sender's RDS port.
     *
     * @return the RDS port, 0 to 65535
     */
    public int sourcePort() {
        return sourcePort;
    }

    /**
     * Sets h_sport.
     *
     * @param port the sender's RDS port, 0 to 65535
     * @return this header
     * @throws IllegalArgumentException if {@code port} is out of range
     */
    public RdsHeader sourcePort(int port) {
        this.sourcePort = u16(port, "h_sport");
        return this;
    }

    /**
     * h_dport, the RDS port the message is for.
     *
     * @return the RDS port, 0 to 65535
     */
    public int destinationPort() {
        return destinationPort;
    }

    /**
     * Sets h_dport.
     *
     * @param port the destination RDS port, 0 to 65535
     * @return this header
     * @throws IllegalArgumentException if {@code port} is out of range
     */
    public RdsHeader destinationPort(int port) {
        this.destinationPort = u16(port, "h_dport");
        return this;
    }

    /**
     * h_flags, a combination of the {@code FLAG_} constants.
     *
     * @return the flags byte, 0 to 255
     */
    public int flags() {
        return flags;
    }

    /**
     * Sets h_flags.
     *
     * @param value the flags byte, 0 to 255
     * @return this header
     * @throws IllegalArgumentException if {@code value} does not fit in 8 unsigned bits
     */
    public RdsHeader flags(int value) {
        this.flags = u8(value, "h_flags");
        return this;
    }

    /**
     * Whether any bit of {@code flag} is set in h_flags.
     *
     * @param flag one of the {@code FLAG_} constants, or several OR-ed together
     * @return true if at least one of those bits is set
     */
    public boolean hasFlag(int flag) {
        return (flags & flag) != 0;
    }

    /**
     * Whether this is a congestion-map message: the kernel tests the flags for equality, not for the bit.
     *
     * @return true if h_flags is exactly {@link #FLAG_CONG_BITMAP}
     */
    public boolean isCongestionMap() {
        return flags == FLAG_CONG_BITMAP;
    }

    /**
     * h_credit, flow-control credits granted to the peer; 0 over TCP.
     *
     * @return the credit byte, 0 to 255
     */
    public int credit() {
        return credit;
    }

    /**
     * Sets h_credit.
     *
     * @param value the credit byte, 0 to 255
     * @return this header
     * @throws IllegalArgumentException if {@code value} does not fit in 8 unsigned bits
     */
    public RdsHeader credit(int value) {
        this.credit = u8(value, "h_credit");
        return this;
    }

    /**
     * The four padding bytes as one big-endian int.
     *
     * @return the padding, normally 0
     */
    public int padding() {
        return padding;
    }

    /**
     * Sets the four padding bytes.
     *
     * @param value the padding as one big-endian int
     * @return this header
     */
    public RdsHeader padding(int value) {
        this.padding = value;
        return this;
    }

    /**
     * h_csum; 0 over TCP and never verified.
     *
     * @return the checksum field, 0 to 65535
     */
    public int checksum() {
        return checksum;
    }

    /**
     * Sets h_csum.
     *
     * @param value the checksum field, 0 to 65535
     * @return this header
     * @throws IllegalArgumentException if {@code value} is out of range
     */
    public RdsHeader checksum(int value) {
        this.checksum = u16(value, "h_csum");
        return this;
    }

    /**
     * The 16-byte extension area itself (not a copy); see {@link ExtensionHeaders} to read and add entries.
     *
     * @return the live extension bytes; writes to it change this header
     */
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
