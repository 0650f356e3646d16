package org.rds4j.transport.loopback;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import org.rds4j.RdsStack;
import org.rds4j.RdsStackConfig;
import org.rds4j.core.testkit.CongestionContract;

/** The congestion and socket-semantics contract over the in-JVM transport, at made-up addresses no network sees. */
class LoopbackCongestionTest extends CongestionContract {
    @Override
    protected RdsStack newStack(String name, InetAddress address, int index) {
        // Short reconnect delays, so that a peer brought up late (the cancel test) is reached quickly.
        return RdsStack.create(RdsStackConfig.builder().name(name).address(address)
                .reconnectDelays(Duration.ofMillis(1), Duration.ofMillis(100))
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
