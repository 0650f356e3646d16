package org.rds4j.core.wire;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.rds4j.core.wire.Golden.Kind;

/**
 * Headers captured from Linux 6.1 kernels and a hand-written peer (src/test/resources/golden/headers.tsv, one row per
 * raw header listed with the golden captures): each decodes to the listed values and encodes back to the same bytes
 * (docs/protocol.md, "Header").
 */
class GoldenHeadersTest {

    /** One row of headers.tsv. */
    record Row(String capture, String stream, int frame, String raw, String seq, String ack, long len, int sport,
            int dport, String flags, int credit, String padding, String csum, String exthdr, String kind,
            String npaths) {
        @Override
        public String toString() {
            return capture + " " + stream + " #" + frame + " " + kind;
        }
    }

    static List<Row> rows() {
        String text = new String(Golden.resource("headers.tsv"), StandardCharsets.UTF_8);
        List<Row> rows = new ArrayList<>();
        boolean header = true;
        for (String line : text.split("\n")) {
            if (line.isBlank() || line.startsWith("#")) {
                continue;
            }
            String[] c = line.split("\t", -1);
            if (header) {
                assertEquals("capture", c[0], "column header line");
                header = false;
                continue;
            }
            assertEquals(16, c.length, line);
            rows.add(new Row(c[0], c[1], Integer.parseInt(c[2]), c[3], c[4], c[5], Long.parseLong(c[6]),
                    Integer.parseInt(c[7]), Integer.parseInt(c[8]), c[9], Integer.parseInt(c[10]), c[11], c[12],
                    c[13], c[14], c[15]));
        }
        return rows;
    }

    /** Each field at its offset, big-endian; decoding then encoding gives back the captured bytes. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("rows")
    void capturedHeaderDecodesToTheListedValuesAndReencodesIdentically(Row row) {
        byte[] raw = Golden.hex(row.raw());
        assertEquals(RdsHeader.SIZE, raw.length);
        RdsHeader h = new RdsHeader().decode(ByteBuffer.wrap(raw));

        assertEquals(Long.parseUnsignedLong(row.seq()), h.sequence(), "h_sequence");
        assertEquals(Long.parseUnsignedLong(row.ack()), h.ack(), "h_ack");
        assertEquals(row.len(), h.length(), "h_len");
        assertEquals(row.sport(), h.sourcePort(), "h_sport");
        assertEquals(row.dport(), h.destinationPort(), "h_dport");
        assertEquals(Integer.decode(row.flags()).intValue(), h.flags(), "h_flags");
        assertEquals(row.credit(), h.credit(), "h_credit");
        assertEquals(Integer.parseUnsignedInt(row.padding(), 16), h.padding(), "h_padding");
        assertEquals(Integer.decode(row.csum()).intValue(), h.checksum(), "h_csum");
        assertArrayEquals(Golden.hex(row.exthdr()), h.extensions(), "h_exthdr");

        ByteBuffer out = ByteBuffer.allocate(RdsHeader.SIZE);
        new RdsHeader().set(h).encode(out);
        assertArrayEquals(raw, out.array(), "re-encoded bytes");

        // the same values set through the setters encode to the captured bytes too
        RdsHeader built = new RdsHeader().sequence(Long.parseUnsignedLong(row.seq()))
                .ack(Long.parseUnsignedLong(row.ack())).length(row.len()).sourcePort(row.sport())
                .destinationPort(row.dport()).flags(Integer.decode(row.flags())).credit(row.credit())
                .padding(Integer.parseUnsignedInt(row.padding(), 16)).checksum(Integer.decode(row.csum()));
        System.arraycopy(Golden.hex(row.exthdr()), 0, built.extensions(), 0, RdsHeader.EXTHDR_SIZE);
        ByteBuffer out2 = ByteBuffer.allocate(RdsHeader.SIZE);
        built.encode(out2);
        assertArrayEquals(raw, out2.array(), "encoded from the listed values");
    }

    /** protocol.md "Header", "Congestion maps", "Ping and multipath probe": what each kind of message looks like on a 6.1 TCP wire. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("rows")
    void capturedHeaderIsOfTheListedKind(Row row) {
        RdsHeader h = new RdsHeader().decode(ByteBuffer.wrap(Golden.hex(row.raw())));
        Kind kind = Kind.valueOf(row.kind());
        assertEquals(kind, Golden.kind(h), "kind");

        // over TCP the kernel never fills in h_ack, h_credit, h_padding or h_csum (protocol.md "Header")
        assertEquals(0, h.ack());
        assertEquals(0, h.credit());
        assertEquals(0, h.padding());
        assertEquals(0, h.checksum());

        long npaths = ExtensionHeaders.find(h.extensions(), ExtensionHeaders.NPATHS);
        assertEquals(row.npaths().equals("-") ? -1 : Long.parseLong(row.npaths()), npaths, "NPATHS");
        // a 6.1 kernel never sends GEN_NUM (protocol.md "Extension headers"), nor does the hand-written peer
        assertEquals(-1, ExtensionHeaders.find(h.extensions(), ExtensionHeaders.GEN_NUM));

        switch (kind) {
            case CONG_MAP -> {
                // protocol.md "Congestion maps": seq 0, len 8192, ports 0, flags exactly 0x01
                assertEquals(RdsHeader.FLAG_CONG_BITMAP, h.flags());
                assertEquals(8192, h.length());
                assertEquals(0, h.sequence());
                assertEquals(0, h.sourcePort());
                assertEquals(0, h.destinationPort());
                assertArrayEquals(new byte[16], h.extensions());
            }
            case PROBE_PING, PROBE_PONG -> {
                // Probe ping sport 1 → dport 0, pong sport 0 → dport 1, zero-length, NPATHS only
                assertEquals(kind == Kind.PROBE_PING ? 1 : 0, h.sourcePort());
                assertEquals(kind == Kind.PROBE_PING ? 0 : 1, h.destinationPort());
                assertEquals(0, h.length());
                assertEquals(0, h.flags());
                assertTrue(npaths > 0, "NPATHS present");
                byte[] expectedExt = new byte[16];
                ExtensionHeaders.add(expectedExt, ExtensionHeaders.NPATHS, npaths, ExtensionHeaders.AddMode.SINGLE);
                assertArrayEquals(expectedExt, h.extensions(), "6.1 layout: 05, u16 NPATHS, 00, zeros");
            }
            case PING, PONG -> {
                // A ping is a zero-length message to port 0, its pong a zero-length message from port 0
                assertEquals(0, h.length());
                assertEquals(0, h.flags());
                assertArrayEquals(new byte[16], h.extensions());
            }
            case DATA -> {
                // protocol.md "Header": data carries no flag but RETRANSMITTED on a TCP wire, and no extension header
                assertEquals(0, h.flags() & ~RdsHeader.FLAG_RETRANSMITTED);
                assertTrue(h.sequence() > 0, "data consumes a sequence number from 1 on");
                assertArrayEquals(new byte[16], h.extensions());
            }
        }
    }

    /**
     * The table covers every capture, every kind but the probe pong (no raw pong header is listed; the capture
     * test decodes them), and the RETRANSMITTED flag of 05b (protocol.md "Sequence numbers, resending, duplicates").
     */
    @Test
    void goldenTableCoversEveryCaptureAndKind() {
        List<Row> rows = rows();
        assertEquals(56, rows.size(), "one row per raw header listed with the captures");
        Set<String> captures = new TreeSet<>();
        Set<Kind> kinds = EnumSet.noneOf(Kind.class);
        boolean retransmitted = false;
        for (Row r : rows) {
            captures.add(r.capture());
            kinds.add(Kind.valueOf(r.kind()));
            retransmitted |= Integer.decode(r.flags()) == RdsHeader.FLAG_RETRANSMITTED;
        }
        assertEquals(Set.of("01-first-contact", "02-sizes", "03-congestion", "04-ping", "05a-conn-drop-frozen-peer",
                "05b-conn-drop-receiver-rst", "host-python-a", "host-python-b"), captures);
        assertEquals(EnumSet.complementOf(EnumSet.of(Kind.PROBE_PONG)), kinds);
        assertTrue(retransmitted, "05b's retransmitted message (seq 684, flags 0x04)");
    }
}
