package org.rds4j.tools;

import java.nio.ByteBuffer;

/**
 * The 63-byte header rds-stress puts in front of every RDS message, and the pattern that follows it when
 * {@code -v} is on. A packed C struct; rds-stress converts the counters to network byte order and keeps addresses and
 * ports as they sit in a {@code sockaddr_in} (network order already), so every multi-byte field is big-endian:
 *
 * <pre>
 *  0 seq u32        4 from_addr [4]   8 to_addr [4]    12 from_port u16  14 to_port u16
 * 16 index u16     18 op u8          19 rdma_op u8     20 rdma_addr u64  28 rdma_phyaddr u64
 * 36 rdma_pattern u64  44 rdma_key u64  52 rdma_size u32  56 rdma_vector u32
 * 60 retry u8      61 rdma_remote_err u8 (always sent as 0)  62 pending u8 (always sent as 0)
 * </pre>
 *
 * A receiver compares the first {@value #CHECKED_BYTES} bytes (seq through op) with what it expects. Over TCP the
 * RDMA fields are zero. Reads and writes work on a buffer in place, so the message loop allocates nothing.
 */
final class RdsStressHeader {
    static final int BYTES = 63;
    /** seq, addresses, ports, index and op: the part a receiver checks. */
    static final int CHECKED_BYTES = 19;

    static final int OP_REQ = 1;
    static final int OP_ACK = 2;

    static final int SEQ = 0;
    static final int FROM_ADDR = 4;
    static final int TO_ADDR = 8;
    static final int FROM_PORT = 12;
    static final int TO_PORT = 14;
    static final int INDEX = 16;
    static final int OP = 18;
    static final int RDMA_OP = 19;
    static final int RDMA_ADDR = 20;
    static final int RDMA_PHYADDR = 28;
    static final int RDMA_PATTERN = 36;
    static final int RDMA_KEY = 44;
    static final int RDMA_SIZE = 52;
    static final int RDMA_VECTOR = 56;
    static final int RETRY = 60;
    static final int RDMA_REMOTE_ERR = 61;
    static final int PENDING = 62;

    private RdsStressHeader() {
    }

    /**
     * A whole header as values, for tests and for reporting a mismatch; the message loop uses the static methods.
     * Addresses are the four octets as a big-endian int; unsigned fields are held widened.
     */
    record Fields(long seq, int fromAddr, int toAddr, int fromPort, int toPort, int index, int op, int rdmaOp,
            long rdmaAddr, long rdmaPhyaddr, long rdmaPattern, long rdmaKey, long rdmaSize, long rdmaVector,
            int retry) {

        /** Writes this header at {@code b}'s absolute offset 0; the two bytes rds-stress never sends stay 0. */
        void write(ByteBuffer b) {
            b.putInt(SEQ, (int) seq).putInt(FROM_ADDR, fromAddr).putInt(TO_ADDR, toAddr)
                    .putShort(FROM_PORT, (short) fromPort).putShort(TO_PORT, (short) toPort)
                    .putShort(INDEX, (short) index).put(OP, (byte) op).put(RDMA_OP, (byte) rdmaOp)
                    .putLong(RDMA_ADDR, rdmaAddr).putLong(RDMA_PHYADDR, rdmaPhyaddr)
                    .putLong(RDMA_PATTERN, rdmaPattern).putLong(RDMA_KEY, rdmaKey)
                    .putInt(RDMA_SIZE, (int) rdmaSize).putInt(RDMA_VECTOR, (int) rdmaVector)
                    .put(RETRY, (byte) retry).put(RDMA_REMOTE_ERR, (byte) 0).put(PENDING, (byte) 0);
        }

        /** Reads a header from {@code b}'s absolute offset 0 (at least {@value #BYTES} bytes), as a receiver does. */
        static Fields read(ByteBuffer b) {
            return new Fields(Integer.toUnsignedLong(b.getInt(SEQ)), b.getInt(FROM_ADDR), b.getInt(TO_ADDR),
                    Short.toUnsignedInt(b.getShort(FROM_PORT)), Short.toUnsignedInt(b.getShort(TO_PORT)),
                    Short.toUnsignedInt(b.getShort(INDEX)), Byte.toUnsignedInt(b.get(OP)),
                    Byte.toUnsignedInt(b.get(RDMA_OP)), b.getLong(RDMA_ADDR), b.getLong(RDMA_PHYADDR),
                    b.getLong(RDMA_PATTERN), b.getLong(RDMA_KEY), Integer.toUnsignedLong(b.getInt(RDMA_SIZE)),
                    Integer.toUnsignedLong(b.getInt(RDMA_VECTOR)), Byte.toUnsignedInt(b.get(RETRY)));
        }
    }

    /** Writes a TCP (no RDMA) header at offset 0 of {@code b}, zeroing the RDMA and trailing fields. */
    static void write(ByteBuffer b, int seq, int fromAddr, int toAddr, int fromPort, int toPort, int index, int op) {
        b.putInt(SEQ, seq).putInt(FROM_ADDR, fromAddr).putInt(TO_ADDR, toAddr)
                .putShort(FROM_PORT, (short) fromPort).putShort(TO_PORT, (short) toPort)
                .putShort(INDEX, (short) index).put(OP, (byte) op);
        for (int i = RDMA_OP; i < BYTES; i++) {
            b.put(i, (byte) 0);
        }
    }

    /**
     * The verification pattern: {@code size} bytes that start at 11 and step through a generator of Z(256),
     * {@code k -> 41 * (k + 3)}, plus one more for every 256 bytes already written, so that a block swapped with
     * another shows. The bytes after a header are the pattern's first bytes.
     */
    static byte[] pattern(int size) {
        byte[] p = new byte[size];
        int k = 11;
        for (int i = 0; i < size; ) {
            p[i] = (byte) k;
            i++;
            k = 41 * (k + 3) + (i >> 8);
        }
        return p;
    }
}
