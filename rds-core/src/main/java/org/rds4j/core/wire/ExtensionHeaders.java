package org.rds4j.core.wire;

/**
 * The extension area of an {@link RdsHeader}: 16 bytes holding a list of {@code [type][payload]} entries with no
 * length byte; the type fixes the payload size. The list ends at a type byte of 0, at a type of 16 or more, or at
 * the end of the area.
 *
 * <p>Two ways of adding entries exist in the kernels rds4j meets. Linux 6.1 accepts one entry per message and writes
 * a terminating 0 after it, which is why its multipath probes carry NPATHS but never GEN_NUM. Later kernels append
 * entries one after another and omit the terminator when the area is exactly full. {@link #add} does either.
 *
 * <p>Parsing follows the kernel's rule for every version: a type below 16 with no known size is taken as
 * zero-length and the next byte is read as a type. Sizes are those of current kernels (RDMA_BYTES 8, SPORT_IDX 1);
 * a 6.1 kernel never sends either type.
 */
public final class ExtensionHeaders {
    /** No entry: a type byte of 0 ends the list. */
    public static final int NONE = 0;
    /** The sender's protocol version, u32 (RDS_EXTHDR_VERSION); rds4j never adds it. */
    public static final int VERSION = 1;
    /** RDMA only: the key of an RDMA operation, u32; never meaningful over TCP. */
    public static final int RDMA = 2;
    /** RDMA only: the destination key and offset, 8 bytes; never meaningful over TCP. */
    public static final int RDMA_DEST = 3;
    /** Post-6.1, RDMA only: the number of bytes transferred, 8 bytes; never meaningful over TCP. */
    public static final int RDMA_BYTES = 4;
    /** The number of paths the sender supports, u16 (multipath probe ping and pong). */
    public static final int NPATHS = 5;
    /** The sender's random generation number, u32, chosen at start (a peer restart changes it). */
    public static final int GEN_NUM = 6;
    /** Post-6.1: the sender encodes the path index in its TCP source port; one dummy byte. */
    public static final int SPORT_IDX = 8;
    /** Types at or above this end the list. */
    public static final int MAX_TYPE = 16;

    private static final int[] SIZES = new int[MAX_TYPE];

    static {
        SIZES[VERSION] = 4;
        SIZES[RDMA] = 4;
        SIZES[RDMA_DEST] = 8;
        SIZES[RDMA_BYTES] = 8;
        SIZES[NPATHS] = 2;
        SIZES[GEN_NUM] = 4;
        SIZES[SPORT_IDX] = 1;
    }

    /** How entries are added, matching the kernel generation of the peer. */
    public enum AddMode {
        /** Linux 6.1: only into an empty area, followed by a 0 terminator. */
        SINGLE,
        /** Post-6.1 kernels: appended after existing entries; no terminator when the area is exactly full. */
        APPEND
    }

    /** Receives the entries of an area, in order. */
    @FunctionalInterface
    public interface Visitor {
        /**
         * One entry: its type, and its payload at {@code area[offset, offset + size)}.
         *
         * @param type the entry's type, 1 to 15
         * @param area the whole extension area (not a copy; do not keep it)
         * @param offset where the payload starts in {@code area}
         * @param size the payload size in bytes, 0 for a type without one
         */
        void visit(int type, byte[] area, int offset, int size);
    }

    private ExtensionHeaders() {
    }

    /**
     * The payload size of a type, 0 for types without one (and for unknown types below 16).
     *
     * @param type an extension type
     * @return the payload size in bytes
     */
    public static int payloadSize(int type) {
        return type >= 0 && type < MAX_TYPE ? SIZES[type] : 0;
    }

    /**
     * Walks the entries of {@code area} as the kernel's receiver does. Never throws for any content.
     *
     * @param area an extension area, normally {@link RdsHeader#extensions()}
     * @param visitor called once for each entry, in order
     */
    public static void forEach(byte[] area, Visitor visitor) {
        int pos = 0;
        while (pos < area.length) {
            int type = Byte.toUnsignedInt(area[pos++]);
            if (type == NONE || type >= MAX_TYPE) {
                return;
            }
            int size = SIZES[type];
            if (pos + size > area.length) {
                return;
            }
            visitor.visit(type, area, pos, size);
            pos += size;
        }
    }

    /**
     * Where the entries of {@code area} end (the offset a new entry would be appended at).
     *
     * @param area an extension area
     * @return the offset of the first byte after the last entry, {@code area.length} when full
     */
    public static int end(byte[] area) {
        int pos = 0;
        while (pos < area.length) {
            int type = Byte.toUnsignedInt(area[pos]);
            if (type == NONE || type >= MAX_TYPE) {
                return pos;
            }
            int size = SIZES[type];
            if (pos + 1 + size > area.length) {
                return pos;
            }
            pos += 1 + size;
        }
        return pos;
    }

    /**
     * Adds an entry whose payload is the low {@code payloadSize(type)} bytes of {@code value}, big-endian.
     *
     * @param area the extension area to add to, changed in place
     * @param type the entry's type, 1 to 15
     * @param value the payload; only its low {@code payloadSize(type)} bytes are written
     * @param mode how to add, matching the peer's kernel generation
     * @return whether it was added; like the kernel, a refusal is silent (no room, a second entry in
     *         {@link AddMode#SINGLE}, or a type of 16 or more)
     */
    public static boolean add(byte[] area, int type, long value, AddMode mode) {
        if (type <= NONE || type >= MAX_TYPE) {
            return false;
        }
        int size = SIZES[type];
        int at;
        if (mode == AddMode.SINGLE) {
            // 6.1 needs room for the type, the payload and the terminator, and an empty area.
            if (area[0] != 0 || 1 + size >= area.length) {
                return false;
            }
            at = 0;
        } else {
            at = end(area);
            if (at + 1 + size > area.length) {
                return false;
            }
        }
        area[at] = (byte) type;
        for (int i = 0; i < size; i++) {
            area[at + 1 + i] = (byte) (value >>> (8 * (size - 1 - i)));
        }
        if (at + 1 + size < area.length) {
            area[at + 1 + size] = NONE;
        }
        return true;
    }

    /**
     * The first entry of {@code type} as an unsigned big-endian number, or -1 if there is none. Meant for the
     * entries of at most 4 bytes rds4j reads (NPATHS, GEN_NUM); an 8-byte payload comes back as its raw 64 bits.
     *
     * @param area an extension area
     * @param type the type to look for
     * @return the payload of its first entry, or -1 if there is none
     */
    public static long find(byte[] area, int type) {
        long[] found = {-1};
        forEach(area, (t, a, off, size) -> {
            if (t == type && found[0] < 0) {
                long v = 0;
                for (int i = 0; i < size; i++) {
                    v = (v << 8) | Byte.toUnsignedInt(a[off + i]);
                }
                found[0] = v;
            }
        });
        return found[0];
    }

    /**
     * A short description such as {@code NPATHS=8 GEN_NUM=0x1234abcd}, for logs.
     *
     * @param area an extension area
     * @return the entries separated by spaces, or {@code none} if there are none
     */
    public static String describe(byte[] area) {
        StringBuilder sb = new StringBuilder();
        forEach(area, (t, a, off, size) -> {
            if (sb.length() > 0) {
                sb.append(' ');
            }
            sb.append(name(t));
            if (size > 0) {
                sb.append("=0x");
                for (int i = 0; i < size; i++) {
                    sb.append(String.format("%02x", a[off + i]));
                }
            }
        });
        return sb.length() == 0 ? "none" : sb.toString();
    }

    /**
     * The kernel's name of an extension type.
     *
     * @param type an extension type
     * @return the name without its {@code RDS_EXTHDR_} prefix, or {@code TYPE} and the number if unknown
     */
    public static String name(int type) {
        switch (type) {
            case NONE: return "NONE";
            case VERSION: return "VERSION";
            case RDMA: return "RDMA";
            case RDMA_DEST: return "RDMA_DEST";
            case RDMA_BYTES: return "RDMA_BYTES";
            case NPATHS: return "NPATHS";
            case GEN_NUM: return "GEN_NUM";
            case SPORT_IDX: return "SPORT_IDX";
            default: return "TYPE" + type;
        }
    }
}
