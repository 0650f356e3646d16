package org.rds4j.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Addresses print as ip(8) and inet_ntop print them: IPv6 in the short form of RFC 5952. */
class AddressFormatTest {
    @ParameterizedTest
    @CsvSource({
        "::1, ::1",
        "0:0:0:0:0:0:0:1, ::1",
        "fd00:0:0:0:0:0:0:2, fd00::2",
        "::, ::",
        "fe80::, fe80::",
        "2001:DB8:0:0:0:0:2:1, 2001:db8::2:1",
        "2001:0db8:0000:0000:0000:0000:0000:0001, 2001:db8::1",
        // RFC 5952 4.2.2: one zero group is not shortened.
        "2001:db8:0:1:1:1:1:1, 2001:db8:0:1:1:1:1:1",
        // 4.2.3: the longest run goes; of runs as long, the first.
        "2001:0:0:1:0:0:0:1, 2001:0:0:1::1",
        "2001:db8:0:0:1:0:0:1, 2001:db8::1:0:0:1",
        "1:0:0:0:0:0:0:0, 1::",
        "0:0:0:0:0:0:0:fffe, ::fffe",
        "127.0.0.2, 127.0.0.2",
        "10.213.0.2, 10.213.0.2",
    })
    void shortForm(String in, String expected) throws UnknownHostException {
        assertEquals(expected, Endpoints.host(InetAddress.getByName(in)));
    }

    @Test
    void aScopeIsKept() throws UnknownHostException {
        byte[] b = InetAddress.getByName("fe80::fc:ff:fe00:1").getAddress();
        assertEquals("fe80::fc:ff:fe00:1%3", Endpoints.host(Inet6Address.getByAddress(null, b, 3)));
    }

    @Test
    void socketAddressesInBrackets() {
        assertEquals("[fd00::2]:4100", Endpoints.format(new InetSocketAddress("fd00:0:0:0:0:0:0:2", 4100)));
        assertEquals("[::1]:0", Endpoints.format(new InetSocketAddress("::1", 0)));
        assertEquals("127.0.0.2:4000", Endpoints.format(new InetSocketAddress("127.0.0.2", 4000)));
    }
}
