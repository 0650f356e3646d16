package org.rds4j.wireshark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Collectors;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.rds4j.core.cong.CongestionMap;
import org.rds4j.core.wire.ExtensionHeaders;
import org.rds4j.core.wire.ExtensionHeaders.AddMode;
import org.rds4j.core.wire.RdsHeader;

/**
 * What the golden captures of Linux 6.1 do not hold, written by rds4j's own encoder into a capture: several
 * extension headers in one message (as 7.x kernels and rds4j send them), an unknown extension type, rds4j's ack-only
 * message, an unknown flag bit, a length above 1 MiB, a header split across segments, a congestion map with ports at
 * both ends of a byte and of the map. The same check as the golden captures (tshark = codec), then the Info column
 * and expert info, and the ports preference.
 */
class SyntheticCaptureTest {
    private static final byte[] CLIENT = {10, (byte) 213, 0, 1};
    private static final byte[] SERVER = {10, (byte) 213, 0, 2};
    private static final int[] CONGESTED = {0, 7, 8, 4000, 4020, 65535};

    @TempDir
    Path work;

    private static RdsHeader header(long seq, long len, int sport, int dport, int flags) {
        return new RdsHeader().sequence(seq).length(len).sourcePort(sport).destinationPort(dport).flags(flags);
    }

    private static byte[] message(RdsHeader h, byte[] payload) {
        ByteBuffer b = ByteBuffer.allocate(RdsHeader.SIZE + payload.length);
        h.encode(b);
        b.put(payload);
        return b.array();
    }

    private static byte[] concat(byte[]... parts) {
        ByteBuffer b = ByteBuffer.allocate(Arrays.stream(parts).mapToInt(p -> p.length).sum());
        for (byte[] p : parts) {
            b.put(p);
        }
        return b.array();
    }

    private static Path capture(Path file, int serverPort) throws Exception {
        CongestionMap map = new CongestionMap();
        for (int port : CONGESTED) {
            map.set(port);
        }
        byte[] bits = new byte[CongestionMap.BYTES];
        map.copyTo(bits);
        byte[] congMap = message(header(0, bits.length, 0, 0, RdsHeader.FLAG_CONG_BITMAP), bits);

        RdsHeader probe = header(1, 0, 1, 0, 0);
        ExtensionHeaders.add(probe.extensions(), ExtensionHeaders.NPATHS, 8, AddMode.APPEND);
        ExtensionHeaders.add(probe.extensions(), ExtensionHeaders.GEN_NUM, 0x12345678L, AddMode.APPEND);
        ExtensionHeaders.add(probe.extensions(), ExtensionHeaders.SPORT_IDX, 0, AddMode.APPEND);
        byte[] retransmitted = message(header(2, 10, 4001, 4000,
                RdsHeader.FLAG_RETRANSMITTED | 0x80).ack(7), new byte[10]);
        byte[] ackOnly = message(header(0, 0, 0, 0, 0).ack(42), new byte[0]);
        byte[] huge = message(header(3, 1048577, 4001, 4000, 0), new byte[1048577]);
        byte[] split = message(header(4, 5, 4001, 4000, 0), new byte[] {1, 2, 3, 4, 5});
        byte[] ping = message(header(5, 0, 4001, 0, 0), new byte[0]);

        byte[] pong = message(header(1, 0, 0, 4001, 0), new byte[0]);
        RdsHeader probePong = header(2, 0, 0, 1, 0);
        ExtensionHeaders.add(probePong.extensions(), ExtensionHeaders.NPATHS, 1, AddMode.APPEND);
        ExtensionHeaders.add(probePong.extensions(), ExtensionHeaders.GEN_NUM, 0xdeadbeefL, AddMode.APPEND);
        RdsHeader probePong61 = header(3, 0, 0, 1, 0);
        ExtensionHeaders.add(probePong61.extensions(), ExtensionHeaders.NPATHS, 8, AddMode.SINGLE);
        RdsHeader unknownExt = header(4, 3, 4000, 4001, 0);
        unknownExt.extensions()[0] = 7;  // a type below 16 with no known size: zero-length, then NPATHS
        unknownExt.extensions()[1] = ExtensionHeaders.NPATHS;
        unknownExt.extensions()[3] = 2;

        new PcapWriter(CLIENT, 40000, SERVER, serverPort).handshake()
                .sendSegmented(true, congMap, 1448)
                .send(true, concat(message(probe, new byte[0]), retransmitted, ackOnly))
                .sendSegmented(true, huge, 65000)
                .send(true, Arrays.copyOfRange(split, 0, 20))
                .send(true, Arrays.copyOfRange(split, 20, 48))
                .send(true, concat(Arrays.copyOfRange(split, 48, split.length), ping))
                .send(false, concat(pong, message(probePong, new byte[0]), message(probePong61, new byte[0]),
                        message(unknownExt, new byte[3])))
                .write(file);
        return file;
    }

    @Test
    void everyKindOfMessageDissectsAsTheCodecReadsItAndIsLabelled() throws Exception {
        Path tshark = Tshark.require();
        Path pcap = capture(work.resolve("synthetic.pcap"), DissectorCheck.RDS_TCP_PORT);
        DissectorCheck.Result r = DissectorCheck.check(tshark, pcap, Files.createDirectories(work.resolve("a")),
                DissectorCheck.RDS_TCP_PORT);
        assertEquals(11, r.frames(), r.codec().toString());
        System.out.println(r.summary());

        String info = r.packets().stream().map(Tshark.Packet::info).collect(Collectors.joining("\n"));
        String congested = Arrays.stream(CONGESTED).mapToObj(Integer::toString).collect(Collectors.joining(","));
        for (String label : List.of(
                "Congestion map: congested " + congested,
                "Probe ping 1 \u2192 0 seq=1 len=0 {NPATHS=8 GEN_NUM=0x12345678 SPORT_IDX}",
                "Data 4001 \u2192 4000 seq=2 len=10 ack=7 [RETRANSMITTED|0x80]",
                "Ack-only ack=42",
                "Data 4001 \u2192 4000 seq=3 len=1048577",
                "Data 4001 \u2192 4000 seq=4 len=5",
                "Ping 4001 \u2192 0 seq=5 len=0",
                "Pong 0 \u2192 4001 seq=1 len=0",
                "Probe pong 0 \u2192 1 seq=2 len=0 {NPATHS=1 GEN_NUM=0xdeadbeef}",
                "Probe pong 0 \u2192 1 seq=3 len=0 {NPATHS=8}",
                "Data 4000 \u2192 4001 seq=4 len=3 {TYPE7 NPATHS=2}")) {
            assertTrue(info.contains(label), "Info column lacks \"" + label + "\":\n" + info);
        }
        String experts = r.packets().stream().map(Tshark.Packet::expertMessages).collect(Collectors.joining("\n"));
        for (String expert : List.of("h_len 1048577 is above the 1 MiB (1048576) limit of RDS senders",
                "Unknown flag bits 0x80", "Message resent after its path was reset",
                "Extension type of unknown size (read as zero-length)")) {
            assertTrue(experts.contains(expert), "no expert info \"" + expert + "\":\n" + experts);
        }
    }

    @Test
    void otherPortsAreDissectedWhenThePreferenceNamesThem() throws Exception {
        Path tshark = Tshark.require();
        Path pcap = capture(work.resolve("port20000.pcap"), 20000);
        DissectorCheck.Result off = DissectorCheck.check(tshark, pcap, Files.createDirectories(work.resolve("off")),
                DissectorCheck.RDS_TCP_PORT);
        assertEquals(0, off.frames(), "port 20000 is not RDS by default");
        DissectorCheck.Result on = DissectorCheck.check(tshark, pcap, Files.createDirectories(work.resolve("on")),
                20000, "-o", "rds.ports:16385,20000");
        assertEquals(11, on.frames());
    }

    /**
     * A header announcing 4 GiB: by default the dissector waits for the payload as the kernel would (no error, no
     * message yet); with the preference off it shows the header at once, flagged, and nothing is malformed.
     */
    @Test
    void aHeaderAnnouncingGigabytesIsNeitherMalformedNorLost() throws Exception {
        Path tshark = Tshark.require();
        Path pcap = work.resolve("huge.pcap");
        byte[] header = new byte[RdsHeader.SIZE];
        header(1, 0xFFFF_FFF0L, 4001, 4000, 0).encode(ByteBuffer.wrap(header));
        new PcapWriter(CLIENT, 40001, SERVER, DissectorCheck.RDS_TCP_PORT).handshake()
                .send(true, concat(header, new byte[100])).send(true, new byte[100]).write(pcap);

        DissectorCheck.Result waiting = DissectorCheck.check(tshark, pcap,
                Files.createDirectories(work.resolve("wait")), DissectorCheck.RDS_TCP_PORT);
        assertEquals(0, waiting.frames());

        List<Tshark.Packet> shown = Tshark.dissect(tshark, pcap, Files.createDirectories(work.resolve("show")),
                "-o", "rds.reassemble_oversized:FALSE");
        Tshark.Packet first = shown.stream().filter(p -> !p.frames().isEmpty()).findFirst().orElseThrow();
        assertEquals(0xFFFF_FFF0L, first.frames().get(0).len());
        assertTrue(first.expertMessages().contains("h_len 4294967280 is above the 1 MiB"), first.expertMessages());
        assertTrue(shown.stream().noneMatch(Tshark.Packet::hasError), "no malformed packet, no Lua error");
    }
}
