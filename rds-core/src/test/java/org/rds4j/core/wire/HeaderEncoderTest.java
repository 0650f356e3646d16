package org.rds4j.core.wire;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.ByteBuffer;
import java.util.List;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.Example;
import net.jqwik.api.From;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.Size;

/**
 * The transmit path's header encoder writes exactly what a cleared {@link RdsHeader} with the same fields encodes, for
 * every header of a sequence in which some messages carry extensions and the next ones do not (the encoder reuses
 * one buffer, so a message without extensions must not inherit the previous one's).
 */
class HeaderEncoderTest {

    record Fields(long sequence, long ack, int length, int sourcePort, int destinationPort, int flags, byte[] ext) {
    }

    @Provide
    Arbitrary<Fields> fields() {
        Arbitrary<byte[]> ext = Arbitraries.bytes().array(byte[].class).ofSize(RdsHeader.EXTHDR_SIZE)
                .injectNull(0.5);
        return Combinators.combine(Arbitraries.longs(), Arbitraries.longs(), Arbitraries.integers().between(0, 1 << 30),
                Arbitraries.integers().between(0, 0xFFFF), Arbitraries.integers().between(0, 0xFFFF),
                Arbitraries.integers().between(0, 0xFF), ext).as(Fields::new);
    }

    private static byte[] reference(Fields f) {
        RdsHeader h = new RdsHeader().clear().sequence(f.sequence()).ack(f.ack()).length(f.length())
                .sourcePort(f.sourcePort()).destinationPort(f.destinationPort()).flags(f.flags());
        if (f.ext() != null) {
            System.arraycopy(f.ext(), 0, h.extensions(), 0, RdsHeader.EXTHDR_SIZE);
        }
        ByteBuffer b = ByteBuffer.allocate(RdsHeader.SIZE);
        h.encode(b);
        return b.array();
    }

    @Property(tries = 300)
    void everyHeaderOfASequenceMatchesTheHeaderCodec(@ForAll @Size(min = 1, max = 20) List<@From("fields") Fields> seq) {
        HeaderEncoder e = new HeaderEncoder();
        for (Fields f : seq) {
            e.encode(f.sequence(), f.ack(), f.length(), f.sourcePort(), f.destinationPort(), f.flags(), f.ext());
            ByteBuffer b = e.buffer();
            assertEquals(0, b.position());
            assertEquals(RdsHeader.SIZE, b.remaining());
            byte[] got = new byte[RdsHeader.SIZE];
            b.get(0, got);
            assertArrayEquals(reference(f), got, () -> "header " + f);
        }
    }

    @Example
    void decodesBackToTheFields() {
        HeaderEncoder e = new HeaderEncoder();
        byte[] ext = new byte[RdsHeader.EXTHDR_SIZE];
        ext[0] = 2;
        e.encode(0x8000_0000_0000_0001L, 7, 65536, 0xFFFF, 16385, RdsHeader.FLAG_RETRANSMITTED, ext);
        RdsHeader h = new RdsHeader();
        h.decode(e.buffer().duplicate());
        assertEquals(0x8000_0000_0000_0001L, h.sequence());
        assertEquals(7, h.ack());
        assertEquals(65536, h.length());
        assertEquals(0xFFFF, h.sourcePort());
        assertEquals(16385, h.destinationPort());
        assertEquals(RdsHeader.FLAG_RETRANSMITTED, h.flags());
        assertArrayEquals(ext, h.extensions());
    }
}
