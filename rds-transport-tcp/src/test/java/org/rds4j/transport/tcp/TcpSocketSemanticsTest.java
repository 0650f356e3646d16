package org.rds4j.transport.tcp;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import org.junit.jupiter.api.AfterEach;
import org.rds4j.RdsStack;
import org.rds4j.RdsStackConfig;
import org.rds4j.core.testkit.SocketSemanticsContract;

/**
 * The socket contract over real TCP: two stacks in this JVM, host A on 127.0.0.1 and host B on 127.0.0.2, both
 * listening on one free TCP port (each on its own address), as two machines would on 16385.
 */
class TcpSocketSemanticsTest extends SocketSemanticsContract {
    private int tcpPort;

    @Override
    protected RdsStack newStack(String name, InetAddress address, int index) throws IOException {
        if (index == 0) {
            tcpPort = freePort();
        }
        return RdsStack.create(RdsStackConfig.builder().name(name).address(address).tcpPort(tcpPort)
                .defaultTransport("tcp").build());
    }

    @AfterEach
    void noLeaks() {
        LeakRecorder.assertNoLeaks();
    }

    static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
            return s.getLocalPort();
        }
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
