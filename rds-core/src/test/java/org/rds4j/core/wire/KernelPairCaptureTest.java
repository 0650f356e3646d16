package org.rds4j.core.wire;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.rds4j.core.wire.ExtensionHeaders.AddMode;
import org.rds4j.core.wire.GoldenCaptureStreamTest.Capture;
import org.rds4j.core.wire.GoldenCaptureStreamTest.Message;
import org.rds4j.core.wire.Golden.Kind;
import org.rds4j.core.wire.PcapTcpStreams.Direction;

/**
 * Two Debian kernels of one generation talking to each other (Linux 6.12 from trixie, 7.2 from sid), recorded by
 * {@code interop/linux/capture-pair.sh}: first contact with the multipath probes, data both ways, three pings, then
 * every TCP connection aborted by the larger address and data again. Each capture has a description beside it
 * ({@code kernel-pair-GEN.md}) whose tables, made by tshark with the project's dissector, list every RDS message; rds4j's
 * codec must read each stream to exactly those headers. The tests then pin what each generation does on the wire.
 */
class KernelPairCaptureTest {
    private static final String G2 = "10.213.0.2";
    private static final String G3 = "10.213.0.3";

    /** One row of a description's stream table: the header fields as tshark's dissector printed them. */
    record Row(long seq, long ack, long len, int sport, int dport, int flags, int credit, int padding, int csum,
            String exthdr, Kind kind) {
        static Row of(Message m) {
            RdsHeader h = m.header();
            return new Row(h.sequence(), h.ack(), h.length(), h.sourcePort(), h.destinationPort(), h.flags(),
                    h.credit(), h.padding(), h.checksum(), hex(h.extensions()), m.kind());
        }
    }

    /** A description: the TCP connections it lists (opener's side as "a:p->b:p") and each stream's messages. */
    record Description(Set<String> opened, Map<String, List<Row>> streams) {
        static Description read(String name) {
            String text = new String(Golden.resource(name + ".md"), StandardCharsets.UTF_8);
            Set<String> opened = new TreeSet<>();
            Map<String, List<Row>> streams = new TreeMap<>();
            List<Row> current = null;
            boolean connections = false;
            for (String line : text.split("\n")) {
                if (line.startsWith("## ")) {
                    connections = line.startsWith("## TCP connections");
                    current = null;
                    if (line.startsWith("## Stream ")) {
                        current = new ArrayList<>();
                        streams.put(line.substring("## Stream ".length()).trim().replace(" -> ", "->"), current);
                    }
                    continue;
                }
                if (!line.startsWith("| ") || line.startsWith("| #") || line.startsWith("| opened")) {
                    continue;
                }
                String[] c = line.substring(1).split("\\|");
                for (int i = 0; i < c.length; i++) {
                    c[i] = c[i].trim();
                }
                if (connections) {
                    opened.add(c[2].replace(" -> ", "->"));
                } else if (current != null) {
                    current.add(new Row(Long.parseUnsignedLong(c[3]), Long.parseUnsignedLong(c[4]),
                            Long.parseLong(c[5]), Integer.parseInt(c[6]), Integer.parseInt(c[7]), Integer.decode(c[8]),
                            Integer.parseInt(c[9]), Integer.decode(c[10]), Integer.decode(c[11]),
                            c[12].replace("`", ""), Kind.valueOf(c[13].substring(0, c[13].indexOf(';')))));
                }
            }
            return new Description(opened, streams);
        }
    }

    /** Every RDS message of the capture, decoded by rds4j's codec, is the one the description lists, in order. */
    @ParameterizedTest
    @ValueSource(strings = {"kernel-pair-6.12", "kernel-pair-7.2"})
    void theCodecReadsEveryMessageAsTheDescriptionLists(String name) throws RdsProtocolException {
        Capture c = new Capture(name);
        Description d = Description.read(name);
        Map<String, List<Row>> decoded = new TreeMap<>();
        c.streams.forEach((stream, messages) -> {
            if (!messages.isEmpty()) {
                decoded.put(stream, messages.stream().map(Row::of).toList());
            }
        });
        assertEquals(d.streams().keySet(), decoded.keySet(), "streams that carried RDS messages");
        int messages = 0;
        for (String s : d.streams().keySet()) {
            assertEquals(d.streams().get(s), decoded.get(s), s);
            messages += decoded.get(s).size();
        }
        assertTrue(messages > 30, "a description parsed to its tables (a guard against reading nothing): " + messages);
        Set<String> opened = c.pcap.directions().stream().filter(x -> x.opened).map(Direction::name)
                .collect(Collectors.toCollection(TreeSet::new));
        assertEquals(d.opened(), opened, "the connections and who opened them");
    }

    /**
     * Both generations: 8 connections at first contact and 8 again after the reset, all opened by the smaller
     * address to the larger one's port 16385 (docs/protocol.md, "Connections"); data in the tools' payload pattern,
     * consecutive sequence numbers on each stream (nothing was in flight at the reset, so nothing is retransmitted).
     */
    @ParameterizedTest
    @ValueSource(strings = {"kernel-pair-6.12", "kernel-pair-7.2"})
    void theSmallerAddressOpensEightPathsTwice(String name) throws RdsProtocolException {
        Capture c = new Capture(name);
        List<Direction> opened = c.pcap.directions().stream().filter(x -> x.opened).toList();
        assertEquals(16, opened.size(), opened.toString());
        for (Direction o : opened) {
            assertEquals(G2, o.source, o.name());
            assertEquals(G3 + ":16385", o.destination + ":" + o.destinationPort, o.name());
        }
        for (Map.Entry<String, List<Message>> s : c.streams.entrySet()) {
            long next = -1;
            for (Message m : s.getValue()) {
                RdsHeader h = m.header();
                assertEquals(0, h.ack(), m.toString());
                assertEquals(0, h.credit(), m.toString());
                assertEquals(0, h.checksum(), m.toString());
                if (m.kind() == Kind.CONG_MAP) {
                    assertEquals(0, h.sequence());
                    continue;
                }
                assertEquals(0, h.flags(), m + ": nothing retransmitted");
                if (next >= 0) {
                    assertEquals(next, h.sequence(), s.getKey() + " " + m);
                }
                next = h.sequence() + 1;
                if (m.kind() == Kind.DATA) {
                    assertPattern(m);
                }
            }
        }
    }

    /**
     * 6.12 behaves as 6.1 does: probes carry NPATHS=8 alone (one extension per message, so no GEN_NUM), the
     * connecting side's source ports are the ordinary ephemeral ones, and after the reset nobody probes again.
     */
    @Test
    void linux612ProbesLike61() throws RdsProtocolException {
        Capture c = new Capture("kernel-pair-6.12");
        byte[] npathsOnly = new byte[RdsHeader.EXTHDR_SIZE];
        ExtensionHeaders.add(npathsOnly, ExtensionHeaders.NPATHS, 8, AddMode.SINGLE);
        List<Message> probes = probes(c);
        assertEquals(2, probes.size(), "one probe ping (from the larger address) and its pong: " + probes);
        for (Message p : probes) {
            assertArrayEquals(npathsOnly, p.header().extensions(), p.toString());
            assertEquals(-1, ExtensionHeaders.find(p.header().extensions(), ExtensionHeaders.GEN_NUM));
        }
        // the smaller address's first data went out on path 0 before any probe of its own (its socket hashed to
        // path 0, so sendmsg sent no probe: docs/protocol.md, "What each kernel generation does"); the larger address probed, the smaller answered
        String path0 = G2 + ":41023->" + G3 + ":16385";
        assertEquals(List.of(Kind.CONG_MAP, Kind.DATA, Kind.DATA, Kind.DATA, Kind.PROBE_PONG),
                c.stream(path0).stream().map(Message::kind).toList());
        assertEquals(Kind.PROBE_PING, c.stream(G3 + ":16385->" + G2 + ":41023").get(1).kind());
        // source ports: not aligned to the path index (here 4 of the 8 first-contact ports are ≡ 5 mod 8)
        Set<Integer> residues = firstContactPorts(c).stream().map(p -> p % 8).collect(Collectors.toSet());
        assertTrue(residues.size() < 8, "6.12 does not encode the path in the source port: " + residues);
    }

    /**
     * 7.2 (docs/protocol.md, "What each kernel generation does"): probes carry NPATHS=8, the host's GEN_NUM and SPORT_IDX one after another; the
     * connecting side binds source ports ≡ path index (mod 8), path 0's port ≡ 0; after the reset both sides probe
     * again on the new path 0.
     */
    @Test
    void linux72ProbesWithGenNumAndSourcePortIndex() throws RdsProtocolException {
        Capture c = new Capture("kernel-pair-7.2");
        List<Message> probes = probes(c);
        assertEquals(8, probes.size(), "two pings and two pongs at first contact, the same after the reset");
        for (Message p : probes) {
            byte[] ext = p.header().extensions();
            long gen = ExtensionHeaders.find(ext, ExtensionHeaders.GEN_NUM);
            assertTrue(gen > 0, p.toString());
            byte[] expected = new byte[RdsHeader.EXTHDR_SIZE];
            assertTrue(ExtensionHeaders.add(expected, ExtensionHeaders.NPATHS, 8, AddMode.APPEND));
            assertTrue(ExtensionHeaders.add(expected, ExtensionHeaders.GEN_NUM, gen, AddMode.APPEND));
            assertTrue(ExtensionHeaders.add(expected, ExtensionHeaders.SPORT_IDX, 0, AddMode.APPEND));
            assertArrayEquals(expected, ext, p + ": NPATHS, GEN_NUM, SPORT_IDX, then the 0 terminator");
            assertEquals(String.format("NPATHS=0x0008 GEN_NUM=0x%08x SPORT_IDX=0x00", gen),
                    ExtensionHeaders.describe(ext));
        }
        // each host sends one generation number throughout, and the two differ
        Map<String, Set<Long>> gens = new TreeMap<>();
        c.streams.forEach((s, ms) -> ms.stream().filter(m -> m.kind() == Kind.PROBE_PING || m.kind() == Kind.PROBE_PONG)
                .forEach(m -> gens.computeIfAbsent(s.substring(0, s.indexOf(':')), k -> new TreeSet<>())
                        .add(ExtensionHeaders.find(m.header().extensions(), ExtensionHeaders.GEN_NUM))));
        assertEquals(Set.of(G2, G3), gens.keySet());
        assertEquals(1, gens.get(G2).size(), gens.toString());
        assertEquals(1, gens.get(G3).size(), gens.toString());
        assertNotEquals(gens.get(G2), gens.get(G3));

        // source ports: the 8 connections of each round cover every residue mod 8; the probes travel on ≡ 0
        List<Integer> ports = c.pcap.directions().stream().filter(x -> x.opened).map(x -> x.sourcePort).toList();
        assertEquals(Set.of(0, 1, 2, 3, 4, 5, 6, 7), ports.subList(0, 8).stream().map(p -> p % 8)
                .collect(Collectors.toSet()), ports.toString());
        assertEquals(Set.of(0, 1, 2, 3, 4, 5, 6, 7), ports.subList(8, 16).stream().map(p -> p % 8)
                .collect(Collectors.toSet()), ports.toString());
        c.streams.forEach((s, ms) -> ms.stream().filter(m -> m.kind() == Kind.PROBE_PING).forEach(m -> {
            int port = Integer.parseInt(s.startsWith(G2) ? s.substring(s.indexOf(':') + 1, s.indexOf("->"))
                    : s.substring(s.lastIndexOf(':') + 1));
            assertEquals(0, port % 8, s + ": probes go on path 0");
        }));
        // first contact: path 0 (port 32776) carried the smaller address's probe and its first data, sent before
        // NPATHS was known (as 7.x kernels do); after the reset the same socket port's data went on path 2 (port 32786)
        assertEquals(List.of(Kind.CONG_MAP, Kind.PROBE_PING, Kind.DATA, Kind.DATA, Kind.DATA, Kind.PROBE_PONG,
                Kind.PING, Kind.PING, Kind.PING), c.stream(G2 + ":32776->" + G3 + ":16385").stream()
                .map(Message::kind).toList());
        assertEquals(List.of(Kind.DATA, Kind.DATA, Kind.DATA), c.stream(G2 + ":32786->" + G3 + ":16385").stream()
                .map(Message::kind).toList());
        assertFalse(c.stream(G3 + ":16385->" + G2 + ":32784").stream().noneMatch(m -> m.kind() == Kind.PROBE_PING),
                "the larger address probes again on the new path 0");
    }

    private static List<Message> probes(Capture c) {
        List<Message> out = new ArrayList<>();
        c.streams.values().forEach(ms -> ms.stream()
                .filter(m -> m.kind() == Kind.PROBE_PING || m.kind() == Kind.PROBE_PONG).forEach(out::add));
        return out;
    }

    private static List<Integer> firstContactPorts(Capture c) {
        return c.pcap.directions().stream().filter(x -> x.opened).map(x -> x.sourcePort).limit(8).toList();
    }

    /** The agent's payload (as rds4j's tools): the first min(8, size) bytes the be64 index k, byte i ≥ 8 = (k + i) mod 251. */
    private static void assertPattern(Message m) {
        byte[] p = m.payload();
        long k = 0;
        for (int i = 0; i < Math.min(8, p.length); i++) {
            k = (k << 8) | Byte.toUnsignedInt(p[i]);
        }
        assertTrue(k < 3, m + ": each sender sends messages 0, 1 and 2, claimed " + k);
        for (int i = 8; i < p.length; i++) {
            assertEquals((byte) ((k + i) % 251), p[i], m + " byte " + i);
        }
    }

    private static String hex(byte[] b) {
        StringBuilder sb = new StringBuilder();
        for (byte x : b) {
            sb.append(String.format("%02x", x));
        }
        return sb.toString();
    }
}
