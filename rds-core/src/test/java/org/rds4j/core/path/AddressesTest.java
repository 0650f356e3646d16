package org.rds4j.core.path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.UnknownHostException;

import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.Size;

/** Who connects (docs/protocol.md, "Connections"): addresses compared as unsigned big-endian numbers. */
class AddressesTest {

    private static InetAddress ip(String s) {
        try {
            return InetAddress.getByName(s);
        } catch (UnknownHostException e) {
            throw new AssertionError(e);
        }
    }

    private static InetAddress ip(byte[] b) {
        try {
            return InetAddress.getByAddress(b);
        } catch (UnknownHostException e) {
            throw new AssertionError(e);
        }
    }

    /** A v4-mapped IPv6 address that Java does not fold to IPv4 on its own. */
    private static InetAddress mapped(String v4) throws UnknownHostException {
        byte[] a = InetAddress.getByName(v4).getAddress();
        byte[] m = new byte[16];
        m[10] = (byte) 0xFF;
        m[11] = (byte) 0xFF;
        System.arraycopy(a, 0, m, 12, 4);
        return Inet6Address.getByAddress(null, m, -1);
    }

    @Example
    void largerLastOctetIsLarger() {
        assertTrue(Addresses.compare(ip("10.0.0.2"), ip("10.0.0.1")) > 0);
        assertTrue(Addresses.compare(ip("10.0.0.1"), ip("10.0.0.2")) < 0);
        assertEquals(0, Addresses.compare(ip("10.0.0.1"), ip("10.0.0.1")));
    }

    /** Unsigned comparison — 200.x is above 10.x although its first byte is negative as a Java byte. */
    @Example
    void comparisonIsUnsigned() {
        assertTrue(Addresses.compare(ip("200.0.0.1"), ip("10.0.0.1")) > 0);
        assertTrue(Addresses.compare(ip("10.0.0.1"), ip("200.0.0.1")) < 0);
        assertTrue(Addresses.compare(ip("10.0.0.128"), ip("10.0.0.127")) > 0);
        assertTrue(Addresses.compare(ip("255.255.255.255"), ip("0.0.0.0")) > 0);
    }

    /** For two IPv4 addresses the order is that of their unsigned 32-bit values. */
    @Property(tries = 1000)
    void ipv4OrderIsUnsigned32BitOrder(@ForAll @Size(4) byte[] a, @ForAll @Size(4) byte[] b) {
        long x = Integer.toUnsignedLong(java.nio.ByteBuffer.wrap(a).getInt());
        long y = Integer.toUnsignedLong(java.nio.ByteBuffer.wrap(b).getInt());
        assertEquals(Long.signum(Long.compare(x, y)), Integer.signum(Addresses.compare(ip(a), ip(b))));
        assertEquals(x < y, Addresses.initiates(ip(a), ip(b)));
    }

    /** IPv4 compares as ::ffff:a.b.c.d, so v4 and its mapped v6 form are equal, and below most v6. */
    @Example
    void ipv4ComparesAsV4MappedIpv6() throws UnknownHostException {
        assertEquals(0, Addresses.compare(ip("10.0.0.1"), mapped("10.0.0.1")));
        assertTrue(Addresses.compare(mapped("10.0.0.2"), ip("10.0.0.1")) > 0);
        assertTrue(Addresses.compare(ip("255.255.255.255"), ip("2001:db8::1")) < 0);
        assertTrue(Addresses.compare(ip("10.0.0.1"), ip("::1")) > 0, "::1 is below ::ffff:0:0");
    }

    @Property(tries = 500)
    void ipv6OrderIsUnsigned128BitOrder(@ForAll @Size(16) byte[] a, @ForAll @Size(16) byte[] b) {
        int expected = 0;
        for (int i = 0; i < 16 && expected == 0; i++) {
            expected = Integer.compare(a[i] & 0xFF, b[i] & 0xFF);
        }
        assertEquals(Integer.signum(expected), Integer.signum(Addresses.compare(ip(a), ip(b))));
        assertEquals(0, Addresses.compare(ip(a), ip(a.clone())));
    }

    /** The kernel's dual-stack listener reports IPv4 peers as ::ffff:a.b.c.d; normalize() turns them into IPv4. */
    @Example
    void v4MappedIpv6NormalizesToIpv4() throws UnknownHostException {
        InetAddress n = Addresses.normalize(mapped("10.213.0.2"));
        assertInstanceOf(Inet4Address.class, n);
        assertEquals(ip("10.213.0.2"), n);
        InetAddress v4 = ip("10.0.0.1");
        assertSame(v4, Addresses.normalize(v4));
        InetAddress v6 = ip("2001:db8::1");
        assertSame(v6, Addresses.normalize(v6));
        InetAddress compat = ip("::10.0.0.1"); // v4-compatible, not v4-mapped: stays IPv6
        assertInstanceOf(Inet6Address.class, Addresses.normalize(compat));
        byte[] almost = mapped("10.0.0.1").getAddress();
        almost[9] = 1;
        assertInstanceOf(Inet6Address.class, Addresses.normalize(ip(almost)));
    }

    /** Only the numerically smaller address opens (and reopens) the connection; never to itself. */
    @Example
    void initiatesOnlyFromTheSmallerAddress() throws UnknownHostException {
        assertTrue(Addresses.initiates(ip("10.213.0.2"), ip("10.213.0.3")));
        assertFalse(Addresses.initiates(ip("10.213.0.3"), ip("10.213.0.2")));
        assertTrue(Addresses.initiates(ip("10.213.0.1"), ip("10.213.0.2")));
        assertFalse(Addresses.initiates(ip("200.0.0.1"), ip("10.0.0.1")));
        assertTrue(Addresses.initiates(ip("10.0.0.1"), ip("200.0.0.1")));
        assertFalse(Addresses.initiates(ip("10.0.0.1"), ip("10.0.0.1")));
        assertFalse(Addresses.initiates(mapped("10.0.0.1"), ip("10.0.0.1")));
    }

    @Property(tries = 500)
    void exactlyOneSideInitiatesBetweenDistinctAddresses(@ForAll @Size(4) byte[] a, @ForAll @Size(4) byte[] b) {
        InetAddress x = ip(a);
        InetAddress y = ip(b);
        if (x.equals(y)) {
            assertFalse(Addresses.initiates(x, y));
        } else {
            assertTrue(Addresses.initiates(x, y) ^ Addresses.initiates(y, x));
        }
    }
}
