package org.rds4j;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** rds4j prints addresses as ip(8) and inet_ntop do: IPv6 in the short form of RFC 5952. */
class RdsAddressesTest {
    @ParameterizedTest
    @CsvSource({
        "::1, ::1",
        "0:0:0:0:0:0:0:1, ::1",
        "fd00:0:0:0:0:0:0:2, fd00::2",
        "::, ::",
        "fe80::, fe80::",
        "2001:DB8:0:0:0:0:2:1, 2001:db8::2:1",
        "2001:db8:0:1:1:1:1:1, 2001:db8:0:1:1:1:1:1",
        "2001:0:0:1:0:0:0:1, 2001:0:0:1::1",
        "2001:db8:0:0:1:0:0:1, 2001:db8::1:0:0:1",
        "1:0:0:0:0:0:0:0, 1::",
        "0:0:0:0:0:0:0:fffe, ::fffe",
        "127.0.0.2, 127.0.0.2",
    })
    void shortForm(String in, String expected) throws UnknownHostException {
        assertEquals(expected, RdsAddresses.format(InetAddress.getByName(in)));
    }

    @Test
    void aScopeIsKeptAndPortsFollowBrackets() throws UnknownHostException {
        byte[] b = InetAddress.getByName("fe80::fc:ff:fe00:1").getAddress();
        assertEquals("fe80::fc:ff:fe00:1%3", RdsAddresses.format(Inet6Address.getByAddress(null, b, 3)));
        assertEquals("[fd00::2]:4100", RdsAddresses.format(new InetSocketAddress("fd00:0:0:0:0:0:0:2", 4100)));
        assertEquals("127.0.0.2:4000", RdsAddresses.format(new InetSocketAddress("127.0.0.2", 4000)));
        assertEquals("none", RdsAddresses.format((InetSocketAddress) null));
    }
}
