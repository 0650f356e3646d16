package org.rds4j.transport.loopback;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import org.rds4j.RdsStack;
import org.rds4j.RdsStackConfig;
import org.rds4j.core.testkit.TestHosts;

/** Hosts over the in-JVM transport, at made-up addresses no network sees. */
final class LoopbackHosts implements TestHosts {
    @Override
    public RdsStack newStack(String name, InetAddress address, int index) {
        // Short reconnect delays, so that a peer brought up late (the cancel test) is reached quickly.
        return RdsStack.create(RdsStackConfig.builder().name(name).address(address)
                .reconnectDelays(Duration.ofMillis(1), Duration.ofMillis(100))
                .defaultTransport(LoopbackTransport.NAME).paths(8).build());
    }

    @Override
    public InetAddress addressA() throws UnknownHostException {
        return InetAddress.getByName("10.99.0.1");
    }

    @Override
    public InetAddress addressB() throws UnknownHostException {
        return InetAddress.getByName("10.99.0.2");
    }

    @Override
    public InetAddress unreachablePeer() throws UnknownHostException {
        return InetAddress.getByName("10.99.0.77");
    }

    @Override
    public InetAddress otherHost(int i) throws UnknownHostException {
        return InetAddress.getByName("10.99.1." + (1 + i));
    }

    @Override
    public String transport() {
        return LoopbackTransport.NAME;
    }
}
