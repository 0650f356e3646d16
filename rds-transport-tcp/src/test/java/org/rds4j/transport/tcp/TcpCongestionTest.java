package org.rds4j.transport.tcp;

import java.io.IOException;
import java.net.InetAddress;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.rds4j.RdsStack;
import org.rds4j.RdsStackConfig;
import org.rds4j.core.testkit.CongestionContract;

/**
 * The congestion and socket-semantics contract over real TCP: host A on 127.0.0.1, host B on 127.0.0.2 (and a late
 * host on 127.0.0.77), all on one free TCP port, each on its own address.
 */
class TcpCongestionTest extends CongestionContract {
    private int tcpPort;

    @Override
    protected RdsStack newStack(String name, InetAddress address, int index) throws IOException {
        if (index == 0) {
            tcpPort = TcpSocketSemanticsTest.freePort();
        }
        // Short reconnect delays, so that a peer brought up late (the cancel test) is reached quickly.
        return RdsStack.create(RdsStackConfig.builder().name(name).address(address).tcpPort(tcpPort)
                .reconnectDelays(Duration.ofMillis(1), Duration.ofMillis(100))
                .defaultTransport("tcp").build());
    }

    @AfterEach
    void noLeaks() {
        LeakRecorder.assertNoLeaks();
    }

    @Override
    protected InetAddress addressA() throws IOException {
        return InetAddress.getByName("127.0.0.1");
    }

    @Override
    protected InetAddress addressB() throws IOException {
        return InetAddress.getByName("127.0.0.2");
    }

    @Override
    protected InetAddress unreachablePeer() throws IOException {
        return InetAddress.getByName("127.0.0.77");
    }

    @Override
    protected String transport() {
        return "tcp";
    }
}
