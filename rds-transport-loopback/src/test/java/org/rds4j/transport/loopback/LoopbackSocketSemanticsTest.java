package org.rds4j.transport.loopback;

import java.net.InetAddress;
import java.net.UnknownHostException;
import org.rds4j.RdsStack;
import org.rds4j.RdsStackConfig;
import org.rds4j.core.testkit.SocketSemanticsContract;

/** The socket contract over the in-JVM transport, with hosts at made-up addresses no network sees. */
class LoopbackSocketSemanticsTest extends SocketSemanticsContract {
    @Override
    protected RdsStack newStack(String name, InetAddress address, int index) {
        return RdsStack.create(RdsStackConfig.builder().name(name).address(address)
                .defaultTransport(LoopbackTransport.NAME).build());
    }

    @Override
    protected InetAddress addressA() throws UnknownHostException {
        return InetAddress.getByName("10.99.0.1");
    }

    @Override
    protected InetAddress addressB() throws UnknownHostException {
        return InetAddress.getByName("10.99.0.2");
    }

    @Override
    protected InetAddress unreachablePeer() throws UnknownHostException {
        return InetAddress.getByName("10.99.0.77");
    }

    @Override
    protected String transport() {
        return LoopbackTransport.NAME;
    }
}
