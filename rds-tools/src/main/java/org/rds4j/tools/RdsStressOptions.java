package org.rds4j.tools;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * The options record rds-stress's active side sends its passive peer over the control connection, and its codec.
 *
 * <p>rds-stress sends a packed C struct with every multi-byte field in network byte order (addresses too: they are
 * held in host order and converted like the counts). Two versions exist. The older one (rds-tools up to 2.0.6, and
 * what 2.0.7 still sends unless {@code -Q} or {@code --async} is given) is {@value #V1_BYTES} bytes:
 *
 * <pre>
 *  0 req_depth u32     4 req_size u32      8 ack_size u32     12 rdma_size u32
 * 16 send_addr u32    20 receive_addr u32 24 starting_port u16 26 nr_tasks u16
 * 28 run_time u32     32..46 one byte each: summary_only rtprio tracing verify show_params show_perfdata
 *                            use_cong_monitor rdma_use_once rdma_use_get_mr rdma_use_fence rdma_cache_mrs
 *                            rdma_key_o_meter suppress_warnings simplex rw_mode
 * 47 rdma_vector u32  51 rdma_alignment u32 55 connect_retries u32
 * </pre>
 *
 * The newer one ({@value #V2_BYTES} bytes) puts a 16-byte NUL-padded version string ("2.0.7") in front and
 * {@code tos} and {@code async} (one byte each) behind. A passive rds-stress reads 16 bytes first: if they are its
 * own version string it reads the rest of the newer record, otherwise they are the first 16 bytes of the older one.
 */
final class RdsStressOptions {
    /** The rds-tools release whose protocol this speaks; the version field of the newer record. */
    static final String VERSION = "2.0.7";
    static final int VERSION_BYTES = 16;
    static final int V1_BYTES = 59;
    static final int V2_BYTES = VERSION_BYTES + V1_BYTES + 2;

    String version = "";
    long reqDepth;
    long reqSize;
    long ackSize;
    long rdmaSize;
    /** IPv4 addresses as unsigned 32-bit values, the first octet most significant. */
    long sendAddr;
    long receiveAddr;
    int startingPort;
    int nrTasks;
    long runTime;
    int summaryOnly;
    int rtprio;
    int tracing;
    int verify;
    int showParams;
    int showPerfdata;
    int useCongMonitor;
    int rdmaUseOnce;
    int rdmaUseGetMr;
    int rdmaUseFence;
    int rdmaCacheMrs;
    int rdmaKeyOMeter;
    int suppressWarnings;
    int simplex;
    int rwMode;
    long rdmaVector;
    long rdmaAlignment;
    long connectRetries;
    int tos;
    int async;

    /** rds-stress's defaults for an active run (its unset fields are all-ones bytes, as it leaves them). */
    static RdsStressOptions defaults() {
        RdsStressOptions o = new RdsStressOptions();
        o.version = VERSION;
        o.reqDepth = 1;
        o.reqSize = 1024;
        o.ackSize = RdsStressHeader.BYTES;
        o.rdmaSize = 0;
        o.sendAddr = 0xffffffffL;
        o.receiveAddr = 0;
        o.startingPort = 4000;
        o.nrTasks = 1;
        o.runTime = 0;
        o.useCongMonitor = 1;
        o.rdmaUseOnce = 1;
        o.rdmaUseFence = 1;
        o.rdmaVector = 1;
        // rds-stress never sets this one before sending, so it goes out as 0xff; receivers ignore it.
        o.suppressWarnings = 0xff;
        return o;
    }

    /** The record to send: the older layout unless {@code tos} or {@code async} needs the newer one, as rds-stress. */
    byte[] encode() {
        boolean newer = tos != 0 || async != 0;
        ByteBuffer b = ByteBuffer.allocate(newer ? V2_BYTES : V1_BYTES);
        if (newer) {
            byte[] v = version.getBytes(StandardCharsets.US_ASCII);
            b.put(Arrays.copyOf(v, VERSION_BYTES));
        }
        b.putInt((int) reqDepth).putInt((int) reqSize).putInt((int) ackSize).putInt((int) rdmaSize)
                .putInt((int) sendAddr).putInt((int) receiveAddr)
                .putShort((short) startingPort).putShort((short) nrTasks).putInt((int) runTime);
        for (int v : new int[] {summaryOnly, rtprio, tracing, verify, showParams, showPerfdata, useCongMonitor,
                rdmaUseOnce, rdmaUseGetMr, rdmaUseFence, rdmaCacheMrs, rdmaKeyOMeter, suppressWarnings, simplex,
                rwMode}) {
            b.put((byte) v);
        }
        b.putInt((int) rdmaVector).putInt((int) rdmaAlignment).putInt((int) connectRetries);
        if (newer) {
            b.put((byte) tos).put((byte) async);
        }
        return b.array();
    }

    /** Whether the first 16 bytes a passive side reads announce the newer record (they are our version string). */
    static boolean announcesNewer(byte[] first16) {
        int end = 0;
        while (end < first16.length && first16[end] != 0) {
            end++;
        }
        return new String(first16, 0, end, StandardCharsets.US_ASCII).equals(VERSION) && end < first16.length;
    }

    /** Decodes either layout; {@code record} is exactly {@value #V1_BYTES} or {@value #V2_BYTES} bytes. */
    static RdsStressOptions decode(byte[] record) {
        if (record.length != V1_BYTES && record.length != V2_BYTES) {
            throw new IllegalArgumentException("an rds-stress options record is " + V1_BYTES + " or " + V2_BYTES
                    + " bytes, not " + record.length);
        }
        RdsStressOptions o = new RdsStressOptions();
        ByteBuffer b = ByteBuffer.wrap(record);
        boolean newer = record.length == V2_BYTES;
        if (newer) {
            byte[] v = new byte[VERSION_BYTES];
            b.get(v);
            int end = 0;
            while (end < v.length && v[end] != 0) {
                end++;
            }
            o.version = new String(v, 0, end, StandardCharsets.US_ASCII);
        }
        o.reqDepth = Integer.toUnsignedLong(b.getInt());
        o.reqSize = Integer.toUnsignedLong(b.getInt());
        o.ackSize = Integer.toUnsignedLong(b.getInt());
        o.rdmaSize = Integer.toUnsignedLong(b.getInt());
        o.sendAddr = Integer.toUnsignedLong(b.getInt());
        o.receiveAddr = Integer.toUnsignedLong(b.getInt());
        o.startingPort = Short.toUnsignedInt(b.getShort());
        o.nrTasks = Short.toUnsignedInt(b.getShort());
        o.runTime = Integer.toUnsignedLong(b.getInt());
        o.summaryOnly = u8(b);
        o.rtprio = u8(b);
        o.tracing = u8(b);
        o.verify = u8(b);
        o.showParams = u8(b);
        o.showPerfdata = u8(b);
        o.useCongMonitor = u8(b);
        o.rdmaUseOnce = u8(b);
        o.rdmaUseGetMr = u8(b);
        o.rdmaUseFence = u8(b);
        o.rdmaCacheMrs = u8(b);
        o.rdmaKeyOMeter = u8(b);
        o.suppressWarnings = u8(b);
        o.simplex = u8(b);
        o.rwMode = u8(b);
        o.rdmaVector = Integer.toUnsignedLong(b.getInt());
        o.rdmaAlignment = Integer.toUnsignedLong(b.getInt());
        o.connectRetries = Integer.toUnsignedLong(b.getInt());
        if (newer) {
            o.tos = u8(b);
            o.async = u8(b);
        }
        return o;
    }

    private static int u8(ByteBuffer b) {
        return Byte.toUnsignedInt(b.get());
    }

    /** The largest message either side sends: the receive and pattern buffers' size. */
    int maxMessage() {
        return (int) Math.max(reqSize, ackSize);
    }
}
