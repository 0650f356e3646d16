package org.rds4j.transport.tcp;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.Map;
import org.rds4j.RdsStack;
import org.rds4j.RdsStackConfig;
import org.rds4j.core.testkit.TestHosts;

/**
 * Hosts over real TCP: host A on 127.0.0.1, host B on 127.0.0.2 (and a late host on 127.0.0.77), all listening on
 * one free TCP port, each on its own address, as machines would all use 16385.
 */
final class TcpHosts implements TestHosts {
    private final Map<String, String> properties;
    private int tcpPort;

    /** Hosts on the transport's defaults (native epoll where it is available, caller I/O there). */
    TcpHosts() {
        this(Map.of());
    }

    /** @param properties transport properties every stack gets, such as {@code tcp.native=false} */
    TcpHosts(Map<String, String> properties) {
        this.properties = Map.copyOf(properties);
    }

    @Override
    public RdsStack newStack(String name, InetAddress address, int index) throws IOException {
        if (index == 0) {
            tcpPort = freePort();
        }
        // Short reconnect delays, so that a peer brought up late (the cancel test) is reached quickly.
        RdsStackConfig.Builder b = RdsStackConfig.builder().name(name).address(address).tcpPort(tcpPort)
                .reconnectDelays(Duration.ofMillis(1), Duration.ofMillis(100))
                .defaultTransport("tcp").paths(8);
        properties.forEach(b::property);
        return RdsStack.create(b.build());
    }

    static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
            return s.getLocalPort();
        }
    }

    /**
     * Two different free ports, for a stack's RDS/TCP and TLS listeners: both are held while the second is found, so
     * the kernel cannot hand out the same one twice (as two {@link #freePort} calls in a row may).
     */
    static int[] twoFreePorts() throws IOException {
        InetAddress a = InetAddress.getByName("127.0.0.1");
        try (ServerSocket s = new ServerSocket(0, 1, a); ServerSocket t = new ServerSocket(0, 1, a)) {
            return new int[] {s.getLocalPort(), t.getLocalPort()};
        }
    }

    @Override
    public InetAddress addressA() throws IOException {
        return InetAddress.getByName("127.0.0.1");
    }

    @Override
    public InetAddress addressB() throws IOException {
        return InetAddress.getByName("127.0.0.2");
    }

    @Override
    public InetAddress unreachablePeer() throws IOException {
        return InetAddress.getByName("127.0.0.77");
    }

    @Override
    public InetAddress otherHost(int i) throws IOException {
        return InetAddress.getByName("127.0.1." + (1 + i));
    }

    @Override
    public String transport() {
        return "tcp";
    }
}
