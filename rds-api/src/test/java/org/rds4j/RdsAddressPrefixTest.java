package org.rds4j;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigInteger;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import net.jqwik.api.Assume;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/** Address prefixes for the allow-list: literal addresses only, bits past the length ignored, mapped IPv4. */
class RdsAddressPrefixTest {
    @ParameterizedTest
    @CsvSource({
        "10.1.0.0/16, 10.1.255.7, true",
        "10.1.0.0/16, 10.2.0.1, false",
        "10.1.2.3, 10.1.2.3, true",
        "10.1.2.3, 10.1.2.4, false",
        "0.0.0.0/0, 192.0.2.1, true",
        "10.1.2.3/15, 10.0.0.1, true",
        "10.1.2.3/15, 10.2.0.1, false",
        "fd00::/8, fd12:3456::1, true",
        "fd00::/8, fe80::1, false",
        "::/0, 2001:db8::1, true",
        "10.0.0.0/8, ::ffff:10.9.8.7, true",
        "10.0.0.0/8, 2001:db8::10.9.8.7, false",
        "fd00::/8, 10.0.0.1, false",
        "10.0.0.0/8, fd00::1, false",
    })
    void contains(String prefix, String address, boolean expected) throws UnknownHostException {
        assertEquals(expected, RdsAddressPrefix.parse(prefix).contains(InetAddress.getByName(address)),
                prefix + " contains " + address);
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "host.example", "10.1.2", "10.1.2.3/33", "fd00::/129", "10.0.0.0/-1", "10.0.0.0/x",
        "1.2.3.4.5", "localhost"})
    void refusesWhatIsNotAPrefix(String text) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> RdsAddressPrefix.parse(text));
        assertTrue(e.getMessage().contains(text), e.getMessage());
    }

    @Test
    void anyContainsLooksInEveryPrefix() throws UnknownHostException {
        java.util.List<RdsAddressPrefix> two = java.util.List.of(RdsAddressPrefix.parse("10.1.0.0/16"),
                RdsAddressPrefix.parse("fd00::/8"));
        assertTrue(RdsAddressPrefix.anyContains(two, InetAddress.getByName("fd00::5")));
        assertTrue(RdsAddressPrefix.anyContains(two, InetAddress.getByName("10.1.7.7")));
        assertFalse(RdsAddressPrefix.anyContains(two, InetAddress.getByName("10.2.0.1")));
        assertFalse(RdsAddressPrefix.anyContains(java.util.List.of(), InetAddress.getByName("10.1.7.7")));
    }

    @Test
    void printsTheNetworkWithItsLength() {
        assertEquals("10.1.0.0/16", RdsAddressPrefix.parse("10.1.2.3/16").toString());
        assertEquals("fd00::/8", RdsAddressPrefix.parse("fd12::1/8").toString());
        assertEquals(RdsAddressPrefix.parse("10.1.0.0/16"), RdsAddressPrefix.parse("10.1.9.9/16"));
        assertFalse(RdsAddressPrefix.parse("10.1.0.0/16").equals(RdsAddressPrefix.parse("10.1.0.0/17")));
    }

    /** An address is in a prefix exactly when its first {@code length} bits equal the prefix's. */
    @Property(tries = 2000)
    void containsAgreesWithTheBits(@ForAll int network, @ForAll int address, @ForAll @IntRange(max = 32) int length)
            throws UnknownHostException {
        RdsAddressPrefix p = RdsAddressPrefix.parse(ipv4(network).getHostAddress() + "/" + length);
        long mask = length == 0 ? 0 : (0xFFFF_FFFFL << (32 - length)) & 0xFFFF_FFFFL;
        boolean expected = ((network & mask) == (address & mask));
        assertEquals(expected, p.contains(ipv4(address)));
        assertTrue(p.contains(ipv4(network)));
    }

    /** The same for IPv6, with 128-bit addresses built from two longs. */
    @Property(tries = 2000)
    void containsAgreesWithTheBitsIpv6(@ForAll long netHigh, @ForAll long netLow, @ForAll long high,
                                       @ForAll long low, @ForAll @IntRange(max = 128) int length)
            throws UnknownHostException {
        InetAddress net = ipv6(netHigh, netLow);
        InetAddress a = ipv6(high, low);
        // Java makes an IPv4 address of an IPv4-mapped one (::ffff:a.b.c.d): the mapped rule is tested above.
        Assume.that(net instanceof Inet6Address && a instanceof Inet6Address);
        RdsAddressPrefix p = RdsAddressPrefix.parse(RdsAddresses.format(net) + "/" + length);
        BigInteger n = new BigInteger(1, net.getAddress()).shiftRight(128 - length);
        BigInteger x = new BigInteger(1, a.getAddress()).shiftRight(128 - length);
        assertEquals(n.equals(x), p.contains(a));
    }

    private static InetAddress ipv4(int v) throws UnknownHostException {
        return InetAddress.getByAddress(new byte[] {(byte) (v >>> 24), (byte) (v >>> 16), (byte) (v >>> 8), (byte) v});
    }

    private static InetAddress ipv6(long high, long low) throws UnknownHostException {
        byte[] b = new byte[16];
        for (int i = 0; i < 8; i++) {
            b[i] = (byte) (high >>> (56 - 8 * i));
            b[8 + i] = (byte) (low >>> (56 - 8 * i));
        }
        return InetAddress.getByAddress(b);
    }
}
