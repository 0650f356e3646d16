package org.rds4j.core.wire;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.rds4j.core.cong.CongestionMap;
import org.rds4j.core.path.Addresses;
import org.rds4j.core.wire.Golden.Kind;
import org.rds4j.core.wire.PcapTcpStreams.Direction;

/**
 * Real RDS/TCP byte streams (Linux 6.1, 6.12 and 7.2 kernel to kernel, and kernel to a hand-written peer), reassembled from the
 * golden captures and cut into messages by {@link FrameDecoder} exactly as received segment by segment.
 */
class GoldenCaptureStreamTest {
    private static final int RDS_TCP_PORT = 16385;

    /** A decoded message: a copy of its header and its payload. */
    record Message(RdsHeader header, byte[] payload) {
        Kind kind() {
            return Golden.kind(header);
        }

        @Override
        public String toString() {
            return kind() + " " + header;
        }
    }

    /** Every RDS stream of a capture, decoded, keyed by the golden tables' stream names. */
    static final class Capture {
        final PcapTcpStreams pcap;
        final Map<String, List<Message>> streams = new LinkedHashMap<>();

        Capture(String name) throws RdsProtocolException {
            pcap = PcapTcpStreams.read(Golden.resource(name + ".pcap"));
            for (Direction d : pcap.directions()) {
                if (d.sourcePort == RDS_TCP_PORT || d.destinationPort == RDS_TCP_PORT) {
                    streams.put(d.name(), decode(d));
                }
            }
        }

        List<Message> stream(String name) {
            List<Message> m = streams.get(name);
            assertTrue(m != null, "no stream " + name + " in " + streams.keySet());
            return m;
        }

        List<Message> data(String name) {
            return stream(name).stream().filter(m -> m.kind() == Kind.DATA).toList();
        }

        /** The streams that carried at least one byte. */
        Set<String> nonEmpty() {
            return pcap.directions().stream().filter(d -> d.bytes > 0).map(Direction::name)
                    .collect(Collectors.toCollection(TreeSet::new));
        }
    }

    /** Feeds one direction's TCP segments to a decoder; the stream must end on a message boundary. */
    private static List<Message> decode(Direction d) throws RdsProtocolException {
        assertEquals(0, d.holes, d + ": bytes missing from the capture");
        assertFalse(d.truncated, d + ": segments cut by the snap length");
        List<Message> out = new ArrayList<>();
        FrameDecoder decoder = new FrameDecoder(1 << 20);
        FrameDecoder.Listener listener = new FrameDecoder.Listener() {
            @Override
            public ByteBuffer payloadBuffer(RdsHeader header) {
                return ByteBuffer.allocate((int) header.length());
            }

            @Override
            public void onMessage(RdsHeader header, ByteBuffer payload) {
                out.add(new Message(new RdsHeader().set(header), payload.array()));
            }
        };
        for (byte[] segment : d.chunks) {
            decoder.decode(ByteBuffer.wrap(segment), listener);
        }
        assertFalse(decoder.inMessage(), d + ": stream ends inside a message after " + out.size() + " messages");
        assertEquals(out.size(), decoder.messages());
        return out;
    }

    /** "KIND KIND*3 ..." as a list of kinds, for the per-stream expectations below. */
    private static List<Kind> kinds(String spec) {
        List<Kind> out = new ArrayList<>();
        for (String s : spec.trim().split("\\s+")) {
            if (s.isEmpty()) {
                continue;
            }
            String[] p = s.split("\\*");
            for (int i = 0, n = p.length > 1 ? Integer.parseInt(p[1]) : 1; i < n; i++) {
                out.add(Kind.valueOf(p[0]));
            }
        }
        return out;
    }

    /** The kinds of every RDS stream of the capture; streams not named in {@code expected} must be empty. */
    private static void assertKinds(Capture c, Map<String, String> expected) {
        Map<String, List<Kind>> want = new TreeMap<>();
        c.streams.keySet().forEach(k -> want.put(k, List.of()));
        expected.forEach((k, v) -> want.put(k, kinds(v)));
        Map<String, List<Kind>> got = new TreeMap<>();
        c.streams.forEach((k, v) -> got.put(k, v.stream().map(Message::kind).toList()));
        assertEquals(want, got);
    }

    /** Payload pattern of the capturing agent: bytes 0..3 the be32 message index, byte k = (index + k) & 0xff. */
    private static void assertAgentPattern(byte[] p, int index) {
        byte[] expected = new byte[p.length];
        for (int k = 0; k < p.length; k++) {
            expected[k] = k < 4 ? (byte) (index >>> (8 * (3 - k))) : (byte) (index + k);
        }
        assertArrayEquals(expected, p, "payload of message " + index);
    }

    private static void assertProbe(Message m, int npaths) {
        byte[] ext = new byte[16];
        ExtensionHeaders.add(ext, ExtensionHeaders.NPATHS, npaths, ExtensionHeaders.AddMode.SINGLE);
        assertArrayEquals(ext, m.header().extensions(), m + ": NPATHS=" + npaths + " and nothing else (6.1: one extension per message)");
        assertEquals(npaths, ExtensionHeaders.find(m.header().extensions(), ExtensionHeaders.NPATHS));
        assertEquals(-1, ExtensionHeaders.find(m.header().extensions(), ExtensionHeaders.GEN_NUM), "no GEN_NUM");
        assertEquals(0, m.header().length());
    }

    private static List<byte[]> payloads(List<Message> ms) {
        return ms.stream().map(Message::payload).toList();
    }

    private static void assertSamePayloads(List<Message> a, List<Message> b) {
        assertEquals(a.size(), b.size());
        for (int i = 0; i < a.size(); i++) {
            assertArrayEquals(a.get(i).payload(), b.get(i).payload(), "echo of message " + i);
        }
    }

    /**
     * Rules every captured stream keeps: it decodes to its end with no partial message, ack/credit/padding/
     * csum are 0 over TCP, congestion maps are seq 0, ports 0, 8192 bytes, and every other message
     * takes the next per-path sequence number (pings, pongs and probes consume them like data: docs/protocol.md, "Sequence numbers, resending, duplicates").
     */
    @ParameterizedTest
    @ValueSource(strings = {"01-first-contact", "03-congestion", "04-ping", "host-python-a", "host-python-b",
        "kernel-pair-6.12", "kernel-pair-7.2"})
    void everyStreamDecodesCleanlyAndKeepsTheTcpRules(String name) throws RdsProtocolException {
        Capture c = new Capture(name);
        assertFalse(c.nonEmpty().isEmpty());
        for (Map.Entry<String, List<Message>> s : c.streams.entrySet()) {
            long nextSeq = -1;
            long bytes = 0;
            for (Message m : s.getValue()) {
                RdsHeader h = m.header();
                String where = name + " " + s.getKey() + " " + m;
                bytes += RdsHeader.SIZE + h.length();
                assertEquals(h.length(), m.payload().length, where);
                assertEquals(0, h.ack(), where);
                assertEquals(0, h.credit(), where);
                assertEquals(0, h.padding(), where);
                assertEquals(0, h.checksum(), where);
                if (m.kind() == Kind.CONG_MAP) {
                    assertEquals(0, h.sequence(), where);
                    assertEquals(CongestionMap.BYTES, h.length(), where);
                    assertEquals(0, h.sourcePort(), where);
                    assertEquals(0, h.destinationPort(), where);
                    assertArrayEquals(new byte[16], h.extensions(), where);
                    continue;
                }
                if (nextSeq >= 0) {
                    assertEquals(nextSeq, h.sequence(), where + ": consecutive sequence numbers");
                }
                nextSeq = h.sequence() + 1;
                assertEquals(0, h.flags(), where);
                if (m.kind() == Kind.DATA || m.kind() == Kind.PING || m.kind() == Kind.PONG) {
                    assertArrayEquals(new byte[16], h.extensions(), where + ": no extension header");
                }
            }
            assertEquals(c.pcap.direction(s.getKey()).bytes, bytes, s.getKey() + ": every byte is in a message");
        }
    }

    /** 01: first contact of two 6.1 kernels, 8 paths, probe ping/pong, data and echoes. */
    @Test
    void firstContact() throws RdsProtocolException {
        Capture c = new Capture("01-first-contact");
        String g2 = "10.213.0.2";
        String g3 = "10.213.0.3:16385";

        // protocol.md "Connections": all 8 connections are opened by the smaller address, to the larger one's port 16385
        Set<String> opened = c.pcap.directions().stream().filter(d -> d.opened).map(Direction::name)
                .collect(Collectors.toCollection(TreeSet::new));
        assertEquals(8, opened.size(), opened.toString());
        for (String s : opened) {
            assertTrue(s.startsWith(g2 + ":") && s.endsWith("->" + g3), s);
        }
        assertTrue(Addresses.initiates(ip(g2), ip("10.213.0.3")));

        // kinds per stream as listed in the golden tables; 4 of the 8 paths stay idle in this capture, and the
        // congestion map goes out on whichever path transmits first (net/rds/send.c), so not on every connection
        Map<String, String> expected = new LinkedHashMap<>();
        for (String port : List.of("53691", "40413", "59599", "57961", "54381", "46051", "58937", "59149")) {
            expected.put(g2 + ":" + port + "->" + g3, "");
            expected.put(g3 + "->" + g2 + ":" + port, "");
        }
        expected.put(g2 + ":53691->" + g3, "CONG_MAP PROBE_PING DATA*3 PROBE_PONG");
        expected.put(g3 + "->" + g2 + ":53691", "CONG_MAP PROBE_PING CONG_MAP PROBE_PONG DATA*3");
        expected.put(g2 + ":40413->" + g3, "CONG_MAP");
        expected.put(g3 + "->" + g2 + ":40413", "CONG_MAP");
        expected.put(g2 + ":54381->" + g3, "CONG_MAP");
        expected.put(g2 + ":59599->" + g3, "CONG_MAP DATA*3");
        expected.put(g3 + "->" + g2 + ":59599", "DATA*3");
        assertKinds(c, expected);

        // A new connection's opener sends the congestion map first, all clear (nobody congested yet)
        for (String s : c.nonEmpty()) {
            if (s.startsWith(g2)) {
                assertEquals(Kind.CONG_MAP, c.stream(s).get(0).kind(), s);
            }
            for (Message m : c.stream(s)) {
                if (m.kind() == Kind.CONG_MAP) {
                    CongestionMap map = new CongestionMap();
                    map.replace(ByteBuffer.wrap(m.payload()));
                    assertEquals(0, map.congestedPorts().length, s);
                }
            }
        }

        // protocol.md "Ping and multipath probe": path 0's probe ping (seq 1) and pong carry NPATHS=8 and no GEN_NUM, both ways
        for (String s : List.of(g2 + ":53691->" + g3, g3 + "->" + g2 + ":53691")) {
            List<Message> ms = c.stream(s);
            Message ping = ms.stream().filter(m -> m.kind() == Kind.PROBE_PING).findFirst().orElseThrow();
            Message pong = ms.stream().filter(m -> m.kind() == Kind.PROBE_PONG).findFirst().orElseThrow();
            assertEquals(1, ping.header().sequence(), s + ": the probe is the first sequenced message");
            assertProbe(ping, 8);
            assertProbe(pong, 8);
        }

        // protocol.md "Sequence numbers, resending, duplicates": tx sequence numbers start at 1 on a fresh path; the 53691 data follows the probe (2..4)
        assertEquals(List.of(2L, 3L, 4L), seqs(c.data(g2 + ":53691->" + g3)));
        assertEquals(List.of(3L, 4L, 5L), seqs(c.data(g3 + "->" + g2 + ":53691")));
        assertEquals(List.of(1L, 2L, 3L), seqs(c.data(g2 + ":59599->" + g3)));
        assertEquals(List.of(1L, 2L, 3L), seqs(c.data(g3 + "->" + g2 + ":59599")));

        // g2 4001 → g3 4000 on path 0, echoed back on the same connection; g3 4003 → g2 4002 on another path
        assertPorts(c.data(g2 + ":53691->" + g3), 4001, 4000);
        assertPorts(c.data(g3 + "->" + g2 + ":53691"), 4000, 4001);
        assertPorts(c.data(g3 + "->" + g2 + ":59599"), 4003, 4002);
        assertPorts(c.data(g2 + ":59599->" + g3), 4002, 4003);
        for (String s : List.of(g2 + ":53691->" + g3, g3 + "->" + g2 + ":59599")) {
            List<Message> data = c.data(s);
            assertEquals(List.of(16, 100, 5), data.stream().map(m -> m.payload().length).toList(), s);
            for (int i = 0; i < data.size(); i++) {
                assertAgentPattern(data.get(i).payload(), i);
            }
        }
        assertSamePayloads(c.data(g2 + ":53691->" + g3), c.data(g3 + "->" + g2 + ":53691"));
        assertSamePayloads(c.data(g3 + "->" + g2 + ":59599"), c.data(g2 + ":59599->" + g3));
    }

    /**
     * 03: a stalled receiver's map sets exactly its port (4020 → byte 502, bit 4: protocol.md "Congestion maps"), a later map clears it; the
     * maps go from the receiver on path 0 while the data flows the other way.
     */
    @Test
    void congestionMapsSetAndClearTheStalledPort() throws RdsProtocolException {
        Capture c = new Capture("03-congestion");
        String toG3 = "10.213.0.2:53691->10.213.0.3:16385";
        String toG2 = "10.213.0.3:16385->10.213.0.2:53691";
        assertEquals(Set.of(toG2, toG3), c.nonEmpty());
        assertKinds(c, Map.of(toG3, "DATA*100", toG2, "CONG_MAP*6"));

        CongestionMap peer = new CongestionMap();
        List<List<Integer>> congested = new ArrayList<>();
        for (Message m : c.stream(toG2)) {
            long generation = peer.generation();
            List<Integer> before = Arrays.stream(peer.congestedPorts()).boxed().toList();
            boolean changed = peer.replace(ByteBuffer.wrap(m.payload()));
            assertEquals(changed, peer.generation() != generation, "a change, and only a change, moves the generation");
            assertEquals(changed, !before.equals(Arrays.stream(peer.congestedPorts()).boxed().toList()),
                    "the kernel repeats an unchanged map (the last two clears): a copy is not a change");
            congested.add(Arrays.stream(peer.congestedPorts()).boxed().toList());
            if (peer.isCongested(4020)) {
                byte[] expected = new byte[CongestionMap.BYTES];
                expected[502] = 0x10;
                assertArrayEquals(expected, m.payload(), "port 4020 is byte 502 mask 0x10, nothing else");
            }
        }
        assertEquals(List.of(List.of(4020), List.of(), List.of(4020), List.of(), List.of(), List.of()), congested);

        // Data continues the path's sequence (6..105); 100 messages of 4096 bytes from 4021 to 4020
        List<Message> data = c.stream(toG3);
        assertEquals(6, data.get(0).header().sequence());
        assertEquals(105, data.get(99).header().sequence());
        assertPorts(data, 4021, 4020);
        for (int i = 0; i < data.size(); i++) {
            assertEquals(4096, data.get(i).payload().length);
            assertAgentPattern(data.get(i).payload(), i);
        }
    }

    /** 04 (protocol.md "Ping and multipath probe"): a ping is a 0-byte message to port 0; its pong comes from port 0 on the same connection. */
    @Test
    void pingAndPong() throws RdsProtocolException {
        Capture c = new Capture("04-ping");
        String out = "10.213.0.2:54381->10.213.0.3:16385";
        String back = "10.213.0.3:16385->10.213.0.2:54381";
        assertEquals(Set.of(out, back), c.nonEmpty());
        assertKinds(c, Map.of(out, "PING*3", back, "PONG*3"));
        assertEquals(List.of(1L, 2L, 3L), seqs(c.stream(out)));
        assertEquals(List.of(1L, 2L, 3L), seqs(c.stream(back)));
        assertPorts(c.stream(out), 4030, 0);
        assertPorts(c.stream(back), 0, 4030);
    }

    /**
     * host-python-a: a non-kernel peer with the smaller address connects (protocol.md "Connections"), probes with NPATHS=1 and sends one
     * message; the kernel answers on that connection: map, its own probe, the pong, then the echo.
     */
    @Test
    void userSpacePeerConnectsToTheKernel() throws RdsProtocolException {
        Capture c = new Capture("host-python-a");
        String out = "10.213.0.1:54349->10.213.0.2:16385";
        String back = "10.213.0.2:16385->10.213.0.1:54349";
        assertKinds(c, Map.of(out, "PROBE_PING DATA PROBE_PONG", back, "CONG_MAP PROBE_PING PROBE_PONG DATA"));
        assertTrue(c.pcap.direction(out).opened);
        assertProbe(c.stream(out).get(0), 1);
        assertProbe(c.stream(out).get(2), 1);
        assertProbe(c.stream(back).get(1), 8);
        assertProbe(c.stream(back).get(2), 8);
        assertEquals(List.of(1L, 2L, 3L), seqs(c.stream(out)));
        assertEquals(List.of(0L, 1L, 2L, 3L), seqs(c.stream(back)));
        assertPorts(c.data(out), 5000, 4000);
        assertPorts(c.data(back), 4000, 5000);
        assertEquals(67, c.data(out).get(0).payload().length);
        assertSamePayloads(c.data(out), c.data(back));
    }

    /**
     * host-python-b (protocol.md "Connections"): the kernel, the larger address, pokes (connects and is reset, no RDS bytes); the peer
     * connects back and probes; the kernel sends its map and the queued data (seq 4.., 1..3 went with the poke).
     */
    @Test
    void kernelPokesAndTheUserSpacePeerConnectsBack() throws RdsProtocolException {
        Capture c = new Capture("host-python-b");
        String poke = "10.213.0.2:34635->10.213.0.1:16385";
        String out = "10.213.0.1:50563->10.213.0.2:16385";
        String back = "10.213.0.2:16385->10.213.0.1:50563";
        assertTrue(c.pcap.direction(poke).opened);
        assertTrue(c.pcap.direction("10.213.0.1:16385->10.213.0.2:34635").rst, "the poke is reset");
        assertTrue(c.pcap.direction(out).opened);
        assertFalse(Addresses.initiates(ip("10.213.0.2"), ip("10.213.0.1")));
        assertTrue(Addresses.initiates(ip("10.213.0.1"), ip("10.213.0.2")));
        assertKinds(c, Map.of(poke, "", "10.213.0.1:16385->10.213.0.2:34635", "",
                out, "PROBE_PING DATA*3", back, "CONG_MAP DATA*3 PROBE_PONG"));
        assertProbe(c.stream(out).get(0), 1);
        assertProbe(c.stream(back).get(4), 8);
        assertEquals(List.of(4L, 5L, 6L), seqs(c.data(back)));
        assertEquals(List.of(2L, 3L, 4L), seqs(c.data(out)));
        assertEquals(List.of(0, 1, 300), c.data(back).stream().map(m -> m.payload().length).toList());
        assertPorts(c.data(back), 4001, 5001);
        assertPorts(c.data(out), 5001, 4001);
        assertSamePayloads(c.data(back), c.data(out));
        assertEquals(3, payloads(c.data(back)).size());
    }

    /** The reader finds the TCP streams of the captures (a guard against a reader that silently sees nothing). */
    @Test
    void pcapReaderSeesEveryPacketsStream() {
        PcapTcpStreams p = PcapTcpStreams.read(Golden.resource("04-ping.pcap"));
        assertTrue(p.packets() > 0);
        Direction out = p.direction("10.213.0.2:54381->10.213.0.3:16385");
        assertEquals(3 * RdsHeader.SIZE, out.bytes);
        assertEquals(0, out.holes);
    }

    private static List<Long> seqs(List<Message> ms) {
        return ms.stream().map(m -> m.header().sequence()).toList();
    }

    private static void assertPorts(List<Message> ms, int sport, int dport) {
        assertFalse(ms.isEmpty());
        for (Message m : ms) {
            assertEquals(sport, m.header().sourcePort(), m.toString());
            assertEquals(dport, m.header().destinationPort(), m.toString());
        }
    }

    private static InetAddress ip(String s) {
        try {
            return InetAddress.getByName(s);
        } catch (UnknownHostException e) {
            throw new AssertionError(e);
        }
    }
}
