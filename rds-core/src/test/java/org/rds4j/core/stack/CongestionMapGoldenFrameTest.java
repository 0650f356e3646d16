package org.rds4j.core.stack;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.rds4j.RdsSocket;
import org.rds4j.RdsSocketOptions;
import org.rds4j.RdsStackConfig;
import org.rds4j.core.cong.CongestionMap;
import org.rds4j.core.wire.RdsHeader;

/**
 * Golden bytes (docs/protocol.md, "Congestion maps"): the congestion-map message a real {@link CoreStack} writes when its socket on
 * port 4020 congests equals, byte for byte (48-byte header + 8192-byte map), the one the Linux kernel sent in the
 * capture golden/03-congestion.pcap (host 10.213.0.3, receiver on port 4020 stalled, data from port 4021).
 *
 * <p>Our frame comes from driving the stack, not from building it: an incoming connection from 10.213.0.2 is accepted
 * by the stack's real {@code ConnectionPath} (through a capturing test transport), 4096-byte data frames for port
 * 4020 are fed into it as the kernel peer sent them, the socket's receive queue crosses half of SO_RCVBUF, the port's
 * bit is set and an update queued, and the path's next transmit is captured through its {@code FrameSink}.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class CongestionMapGoldenFrameTest {
    private static final int FRAME = RdsHeader.SIZE + CongestionMap.BYTES;

    @Test
    void theMapMessageForACongestedPort4020MatchesTheKernelsBytes() throws Exception {
        byte[] golden = kernelFrameWithPort4020();
        assertEquals(FRAME, golden.length);

        InetAddress g3 = InetAddress.getByName("10.213.0.3");
        InetAddress g2 = InetAddress.getByName("10.213.0.2");
        try (CoreStack stack = new CoreStack(RdsStackConfig.builder().name("g3").address(g3).build())) {
            CapturingTransport transport = CapturingTransport.install(stack);
            RdsSocket receiver = stack.openSocket();
            receiver.setOption(RdsSocketOptions.SO_RDS_TRANSPORT, CapturingTransport.NAME);
            receiver.setOption(RdsSocketOptions.SO_RCVBUF, 16_384);      // budget 16384: congested after 5 messages
            receiver.bind(new InetSocketAddress(g3, 4020));
            CapturingTransport.Conn conn = transport.accept(new InetSocketAddress(g3, 16385),
                    new InetSocketAddress(g2, 53691));
            byte[] first = conn.transmit();
            assertTrue(first.length >= FRAME, "the map goes first on a new connection");
            assertEquals(0, ByteBuffer.wrap(first, RdsHeader.SIZE, CongestionMap.BYTES).compareTo(
                    ByteBuffer.allocate(CongestionMap.BYTES)), "nothing congested yet: an empty map");

            RdsHeader h = new RdsHeader();
            ByteBuffer hb = ByteBuffer.allocate(RdsHeader.SIZE);
            int fed = 0;
            while (!stack.localMap(g3).isCongested(4020)) {
                assertTrue(fed < 10, "port 4020 never congested");
                fed++;
                h.clear().sequence(fed).length(4096).sourcePort(4021).destinationPort(4020);
                hb.clear();
                h.encode(hb);
                hb.flip();
                ByteBuffer frame = ByteBuffer.allocate(RdsHeader.SIZE + 4096).put(hb).put(new byte[4096]).flip();
                conn.deliver(frame);
            }
            assertEquals(5, fed, "4 × 4096 = 16384 is not above the budget; the 5th message is");
            byte[] out = conn.transmit();
            assertTrue(out.length >= FRAME, "an update follows the change");
            byte[] ours = Arrays.copyOf(out, FRAME);
            RdsHeader decoded = new RdsHeader().decode(ByteBuffer.wrap(ours, 0, RdsHeader.SIZE));
            assertTrue(decoded.isCongestionMap(), "the first frame after the change is the map: " + decoded);
            assertArrayEquals(Arrays.copyOf(golden, RdsHeader.SIZE), Arrays.copyOf(ours, RdsHeader.SIZE),
                    "header: seq 0, ack 0, len 8192, ports 0, flags 0x01, the rest 0");
            assertArrayEquals(golden, ours, "48-byte header + 8192-byte map, byte for byte");
            assertEquals(0x10, ours[RdsHeader.SIZE + 502], "port 4020 is byte 502, mask 0x10");
        }
    }

    /**
     * The first congestion-map frame with port 4020 set in the kernel's stream 10.213.0.3:16385 -> 10.213.0.2:53691,
     * reassembled by the shared pcap reader (package-private in org.rds4j.core.wire, hence the reflection).
     */
    private static byte[] kernelFrameWithPort4020() throws Exception {
        byte[] pcap;
        try (InputStream in = CongestionMapGoldenFrameTest.class.getResourceAsStream("/golden/03-congestion.pcap")) {
            assertNotNull(in, "missing golden/03-congestion.pcap");
            pcap = in.readAllBytes();
        }
        Class<?> reader = Class.forName("org.rds4j.core.wire.PcapTcpStreams");
        Method read = reader.getDeclaredMethod("read", byte[].class);
        read.setAccessible(true);
        Object streams = read.invoke(null, (Object) pcap);
        Method directions = reader.getDeclaredMethod("directions");
        directions.setAccessible(true);
        Class<?> direction = Class.forName("org.rds4j.core.wire.PcapTcpStreams$Direction");
        Method name = direction.getDeclaredMethod("name");
        name.setAccessible(true);
        Field chunks = direction.getDeclaredField("chunks");
        chunks.setAccessible(true);
        Field holes = direction.getDeclaredField("holes");
        holes.setAccessible(true);
        for (Object d : (List<?>) directions.invoke(streams)) {
            if (!"10.213.0.3:16385->10.213.0.2:53691".equals(name.invoke(d))) {
                continue;
            }
            assertEquals(0, holes.getInt(d), "bytes missing from the capture");
            ByteArrayOutputStream all = new ByteArrayOutputStream();
            for (Object chunk : (List<?>) chunks.get(d)) {
                all.writeBytes((byte[]) chunk);
            }
            byte[] stream = all.toByteArray();
            int off = 0;
            while (off + RdsHeader.SIZE <= stream.length) {
                RdsHeader h = new RdsHeader().decode(ByteBuffer.wrap(stream, off, RdsHeader.SIZE));
                int len = (int) h.length();
                if (h.isCongestionMap() && len == CongestionMap.BYTES
                        && (stream[off + RdsHeader.SIZE + 502] & 0x10) != 0) {
                    return Arrays.copyOfRange(stream, off, off + FRAME);
                }
                off += RdsHeader.SIZE + len;
            }
            assertFalse(true, "no map with port 4020 set in the kernel's stream");
        }
        throw new AssertionError("no stream 10.213.0.3:16385->10.213.0.2:53691 in the capture");
    }
}
