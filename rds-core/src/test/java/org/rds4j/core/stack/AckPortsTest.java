package org.rds4j.core.stack;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import org.junit.jupiter.api.Test;
import org.rds4j.EaddrinuseException;
import org.rds4j.RdsSocket;
import org.rds4j.RdsStackConfig;

/**
 * The ports a stack keeps for its acknowledgement pings never cost an application a bind. A kernel would
 * never refuse binding a free port, so a socket that asks for one of them by number gets it, and the stack stops
 * pinging from it; the free-port search still goes around them.
 */
class AckPortsTest {
    @Test
    void anApplicationBindingAnAcknowledgementPortByNumberGetsIt() throws Exception {
        InetAddress a = InetAddress.getByName("10.77.0.1");
        // The transport is installed after create, so sockets choose it by option: create accepts only a default
        // transport that is installed.
        try (CoreStack stack = new CoreStack(RdsStackConfig.builder().name("ack-ports").address(a).build())) {
            CapturingTransport.install(stack);
            int[] ports = stack.ackPorts(a, 4);
            assertEquals(4, ports.length);
            for (int p : ports) {
                assertTrue(stack.isAckPort(a, p), "reserved: " + p);
            }
            RdsSocket s = stack.openSocket();
            s.setOption(org.rds4j.RdsSocketOptions.SO_RDS_TRANSPORT, CapturingTransport.NAME);
            s.bind(new InetSocketAddress(a, ports[0]));
            assertEquals(ports[0], s.localAddress().getPort());
            assertFalse(stack.isAckPort(a, ports[0]), "taken over: the stack no longer pings from it");
            assertTrue(stack.isAckPort(a, ports[1]), "the others stay the stack's");
            try (RdsSocket second = stack.openSocket()) {
                second.setOption(org.rds4j.RdsSocketOptions.SO_RDS_TRANSPORT, CapturingTransport.NAME);
                assertThrows(EaddrinuseException.class, () -> second.bind(new InetSocketAddress(a, ports[0])),
                        "a socket's port is still a socket's");
            }
            s.close();
            assertFalse(stack.isAckPort(a, ports[0]), "an application's port, once released, is free, not reserved");
        }
    }
}
