package org.rds4j.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.rds4j.RdsStack;

class NetOptionsTest {
    private static NetOptions parse(String... argv) throws UsageException {
        return NetOptions.from(Args.parse(argv, NetOptions.VALUE_OPTIONS, Set.of()));
    }

    @Test
    void propertiesGoIntoTheToolsStack() throws Exception {
        NetOptions o = parse("--transport", "loopback", "--property", "tcp.yieldMicros=0, tcp.ioThreads=2");
        assertEquals(Map.of("tcp.yieldMicros", "0", "tcp.ioThreads", "2"), o.properties);
        try (RdsStack stack = o.createStack("net-options", InetAddress.getByName("127.0.0.1"))) {
            assertEquals("0", stack.config().property("tcp.yieldMicros", null));
            assertEquals("2", stack.config().property("tcp.ioThreads", null));
        }
        assertTrue(parse().properties.isEmpty());
    }

    @Test
    void aPropertyWithoutKeyOrEqualsSignIsAUsageError() {
        UsageException e = assertThrows(UsageException.class, () -> parse("--property", "tcp.yieldMicros"));
        assertTrue(e.getMessage().contains("KEY=VALUE"), e.getMessage());
        assertThrows(UsageException.class, () -> parse("--property", "=3"));
    }

    @Test
    void pathsGoIntoTheToolsStack() throws Exception {
        assertEquals(8, parse().paths, "the kernel's number unless asked");
        NetOptions o = parse("--transport", "loopback", "--paths", "2");
        try (RdsStack stack = o.createStack("net-options", InetAddress.getByName("127.0.0.1"))) {
            assertEquals(2, stack.config().paths());
        }
    }

    @Test
    void pathsOtherThanAPowerOfTwoUpToEightAreAUsageError() {
        for (String bad : new String[] {"0", "3", "16"}) {
            UsageException e = assertThrows(UsageException.class, () -> parse("--paths", bad));
            assertTrue(e.getMessage().contains("--paths"), e.getMessage());
        }
    }
}
