package org.rds4j.examples;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.rds4j.EmsgsizeException;
import org.rds4j.RdsDatagram;
import org.rds4j.RdsSocket;
import org.rds4j.RdsStack;
import org.rds4j.RdsStackConfig;

/**
 * The code of docs/getting-started.md, so that it keeps compiling and working: a unit test on the loopback transport
 * (two hosts, 10.0.0.1 and 10.0.0.2, inside this JVM, no sockets), and the first message over TCP.
 */
@Timeout(60)
class GettingStartedTest {
    private RdsStack hostA;
    private RdsStack hostB;

    @BeforeEach
    void startHosts() throws IOException {
        hostA = RdsStack.create(RdsStackConfig.builder().name("a")
                .address(InetAddress.getByName("10.0.0.1")).defaultTransport("loopback").build());
        hostB = RdsStack.create(RdsStackConfig.builder().name("b")
                .address(InetAddress.getByName("10.0.0.2")).defaultTransport("loopback").build());
    }

    @AfterEach
    void stopHosts() {
        hostA.close();    // closes the stack's sockets and stops its threads
        hostB.close();
    }

    @Test
    void aMessageArrives() throws IOException {
        try (RdsSocket a = RdsSocket.open(hostA); RdsSocket b = RdsSocket.open(hostB)) {
            b.bind(new InetSocketAddress("10.0.0.2", 4000));
            a.bind(new InetSocketAddress("10.0.0.1", 0));

            a.send(ByteBuffer.wrap("ping".getBytes(UTF_8)), b.localAddress());

            RdsDatagram d = b.receive(Duration.ofSeconds(5)).orElseThrow();
            assertEquals("ping", UTF_8.decode(d.payload()).toString());
            assertEquals(a.localAddress(), d.source());
        }
    }

    @Test
    void tooBigAMessageIsRefused() throws IOException {
        try (RdsSocket a = RdsSocket.open(hostA)) {
            a.bind(new InetSocketAddress("10.0.0.1", 0));
            ByteBuffer huge = ByteBuffer.allocate(2 * 1024 * 1024);     // RDS's limit is 1 MiB
            assertThrows(EmsgsizeException.class, () -> a.send(huge, new InetSocketAddress("10.0.0.2", 4000)));
        }
    }

    @Test
    void helloOverTcp() throws IOException {
        String line = HelloRds.hello(ClusterDemo.freeTcpPort());
        assertEquals("/127.0.0.1:", line.substring(0, 11), line);
        assertEquals(" says: hello, RDS", line.substring(line.indexOf(' ')), line);
    }
}
