package org.rds4j.tools;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;
import org.junit.jupiter.api.Test;

/**
 * rds-stress's wire formats against byte vectors written out from its C structs (rds-stress.c in rds-tools 2.0.7),
 * not from this codec: both structs are {@code __attribute__((packed))}, so fields follow each other with no padding,
 * and rds-stress converts every multi-byte field with htonl/htons (addresses are kept in host order in the options,
 * so they go out big-endian like the counts; in the message header they are copied from a sockaddr_in, which is
 * network order already).
 */
class RdsStressCodecTest {
    private static final HexFormat HEX = HexFormat.of();

    /**
     * struct options_2_0_6 for depth 8, req 1024, ack 63, no RDMA, send 127.0.0.1, receive 127.0.0.2, port 4000,
     * 2 tasks, 10 s, -v, and the rest at rds-stress's defaults:
     * req_depth u32 | req_size u32 | ack_size u32 | rdma_size u32 | send_addr u32 | receive_addr u32 (24 bytes),
     * starting_port u16 | nr_tasks u16 | run_time u32 (32), fifteen u8 flags in declaration order: summary_only 0,
     * rtprio 0, tracing 0, verify 1, show_params 0, show_perfdata 0, use_cong_monitor 1, rdma_use_once 1 (it
     * defaults to !rdma_cache_mrs), rdma_use_get_mr 0, rdma_use_fence 1, rdma_cache_mrs 0, rdma_key_o_meter 0,
     * suppress_warnings 0xff (left at rds-stress's memset 0xff), simplex 0, rw_mode 0 (47), then rdma_vector u32 1,
     * rdma_alignment u32 0, connect_retries u32 0: 59 bytes.
     */
    private static final String V1 = "00000008" + "00000400" + "0000003f" + "00000000" + "7f000001" + "7f000002"
            + "0fa0" + "0002" + "0000000a"
            + "000000010000010100010000ff0000"
            + "00000001" + "00000000" + "00000000";

    /** struct options: char version[16] "2.0.7" NUL-padded, the 59 bytes above, tos u8 3, async u8 0: 77 bytes. */
    private static final String V2 = HEX.formatHex("2.0.7".getBytes(StandardCharsets.US_ASCII)) + "00".repeat(11)
            + V1 + "03" + "00";

    private static RdsStressOptions sample() throws UsageException {
        RdsStressCli.Parsed p = RdsStressCli.parse(java.util.List.of("-s", "127.0.0.1", "-r", "127.0.0.2", "-d", "8",
                "-t", "2", "-T", "10", "-v"));
        return p.options();
    }

    @Test
    void olderRecordMatchesTheStructLayout() throws Exception {
        assertEquals(59, HEX.parseHex(V1).length);
        assertEquals(V1, HEX.formatHex(sample().encode()));
    }

    @Test
    void newerRecordCarriesVersionTosAndAsync() throws Exception {
        assertEquals(77, HEX.parseHex(V2).length);
        RdsStressOptions o = sample();
        o.tos = 3;
        assertEquals(V2, HEX.formatHex(o.encode()));
        RdsStressOptions d = RdsStressOptions.decode(HEX.parseHex(V2));
        assertEquals("2.0.7", d.version);
        assertEquals(3, d.tos);
        assertEquals(0, d.async);
        assertEquals(8, d.reqDepth);
    }

    @Test
    void olderRecordDecodesFieldByField() {
        RdsStressOptions d = RdsStressOptions.decode(HEX.parseHex(V1));
        assertEquals("", d.version);
        assertEquals(8, d.reqDepth);
        assertEquals(1024, d.reqSize);
        assertEquals(63, d.ackSize);
        assertEquals(0, d.rdmaSize);
        assertEquals(0x7f000001L, d.sendAddr);
        assertEquals(0x7f000002L, d.receiveAddr);
        assertEquals(4000, d.startingPort);
        assertEquals(2, d.nrTasks);
        assertEquals(10, d.runTime);
        assertEquals(1, d.verify);
        assertEquals(1, d.useCongMonitor);
        assertEquals(0xff, d.suppressWarnings);
        assertEquals(0, d.simplex);
        assertEquals(1, d.rdmaVector);
        assertEquals(0, d.tos);
        assertArrayEquals(HEX.parseHex(V1), d.encode());
    }

    @Test
    void passiveSideTellsTheVersionsApartByTheFirstSixteenBytes() {
        assertTrue(RdsStressOptions.announcesNewer(java.util.Arrays.copyOf(HEX.parseHex(V2), 16)));
        assertFalse(RdsStressOptions.announcesNewer(java.util.Arrays.copyOf(HEX.parseHex(V1), 16)));
        // Another release's version string is not ours: rds-stress reads it as the older record, and so do we.
        byte[] other = java.util.Arrays.copyOf("2.0.8".getBytes(StandardCharsets.US_ASCII), 16);
        assertFalse(RdsStressOptions.announcesNewer(other));
    }

    /**
     * struct header: seq u32 5 | from_addr 127.0.0.2 | to_addr 127.0.0.1 | from_port u16 4001 | to_port u16 4002 |
     * index u16 7 | op u8 1 (REQ) | rdma_op u8 | rdma_addr, rdma_phyaddr, rdma_pattern, rdma_key u64 |
     * rdma_size, rdma_vector u32 | retry, rdma_remote_err, pending u8: 19 + 1 + 32 + 8 + 3 = 63 bytes.
     */
    @Test
    void headerMatchesTheStructLayout() {
        String expected = "00000005" + "7f000002" + "7f000001" + "0fa1" + "0fa2" + "0007" + "01" + "00".repeat(44);
        ByteBuffer b = ByteBuffer.allocate(RdsStressHeader.BYTES);
        for (int i = 0; i < b.capacity(); i++) {
            b.put(i, (byte) 0x5a); // whatever was there before must not show through
        }
        RdsStressHeader.write(b, 5, 0x7f000002, 0x7f000001, 4001, 4002, 7, RdsStressHeader.OP_REQ);
        assertEquals(expected, HEX.formatHex(b.array()));
        assertEquals(63, HEX.parseHex(expected).length);
    }

    /** rds-stress's pattern: k starts at 11, then k = 41 * (k + 3) + (i >> 8) with i the index being written. */
    @Test
    void patternStartsAsTheGeneratorDictates() {
        byte[] p = RdsStressHeader.pattern(600);
        // 11; 41 * 14 = 574 = 0x23e; 41 * (574 + 3) = 23657 = 0x5c69.
        assertEquals(0x0b, p[0] & 0xff);
        assertEquals(0x3e, p[1] & 0xff);
        assertEquals(0x69, p[2] & 0xff);
        for (int i = 1; i < p.length; i++) {
            // Only the low byte of k matters for the next low byte: the recurrence holds modulo 256.
            assertEquals((41 * ((p[i - 1] & 0xff) + 3) + (i >> 8)) & 0xff, p[i] & 0xff, "byte " + i);
        }
    }

    @Property(tries = 300)
    void headerRoundTrips(@ForAll @LongRange(min = 0, max = 0xffffffffL) long seq, @ForAll int fromAddr,
            @ForAll int toAddr, @ForAll @IntRange(min = 0, max = 65535) int fromPort,
            @ForAll @IntRange(min = 0, max = 65535) int toPort, @ForAll @IntRange(min = 0, max = 65535) int index,
            @ForAll @IntRange(min = 0, max = 255) int op, @ForAll @IntRange(min = 0, max = 255) int rdmaOp,
            @ForAll long rdmaAddr, @ForAll long rdmaKey, @ForAll @LongRange(min = 0, max = 0xffffffffL) long size,
            @ForAll @IntRange(min = 0, max = 255) int retry) {
        RdsStressHeader.Fields f = new RdsStressHeader.Fields(seq, fromAddr, toAddr, fromPort, toPort, index, op,
                rdmaOp, rdmaAddr, ~rdmaAddr, rdmaKey ^ 0x5555, rdmaKey, size, size ^ 1, retry);
        ByteBuffer b = ByteBuffer.allocate(RdsStressHeader.BYTES);
        f.write(b);
        assertEquals(f, RdsStressHeader.Fields.read(b));
        // The big-endian claim, byte by byte, for the fields the receiver checks.
        assertEquals((byte) (seq >>> 24), b.get(0));
        assertEquals((byte) seq, b.get(3));
        assertEquals((byte) (fromPort >>> 8), b.get(12));
        assertEquals((byte) (index >>> 8), b.get(16));
        assertEquals((byte) op, b.get(18));

        // The message loop's writer gives the same bytes as the record with the RDMA fields zero.
        ByteBuffer fast = ByteBuffer.allocate(RdsStressHeader.BYTES);
        RdsStressHeader.write(fast, (int) seq, fromAddr, toAddr, fromPort, toPort, index, op);
        ByteBuffer slow = ByteBuffer.allocate(RdsStressHeader.BYTES);
        new RdsStressHeader.Fields(seq, fromAddr, toAddr, fromPort, toPort, index, op, 0, 0, 0, 0, 0, 0, 0, 0)
                .write(slow);
        assertArrayEquals(slow.array(), fast.array());
    }
}
