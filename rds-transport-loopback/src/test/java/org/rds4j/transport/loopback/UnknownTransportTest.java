package org.rds4j.transport.loopback;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import org.junit.jupiter.api.Test;
import org.rds4j.RdsSocket;
import org.rds4j.RdsStack;
import org.rds4j.RdsStackConfig;

/** A default transport that is not installed fails at create, naming the ones that are. */
class UnknownTransportTest {
    @Test
    void createRefusesATransportThatIsNotInstalledAndListsTheInstalledOnes() throws Exception {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> RdsStack.create(RdsStackConfig.builder().name("rdma").defaultTransport("rdma").jmx(false)
                        .build()).close());
        String m = e.getMessage();
        assertTrue(m.contains("'rdma'") && m.contains("installed: [" + LoopbackTransport.NAME + "]"), m);
    }

    @Test
    void createAcceptsAnInstalledTransportAndSocketsBindWithIt() throws Exception {
        InetAddress a = InetAddress.getByName("10.98.1.1");
        try (RdsStack stack = RdsStack.create(RdsStackConfig.builder().name("known").address(a)
                .defaultTransport(LoopbackTransport.NAME).jmx(false).build());
             RdsSocket s = stack.openSocket()) {
            s.bind(new InetSocketAddress(a, 0));
            assertTrue(s.localAddress().getPort() > 0, "bound with the loopback transport");
        }
    }
}
