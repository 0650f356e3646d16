package org.rds4j.transport.tcp;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Optional;
import org.rds4j.RdsDatagram;
import org.rds4j.RdsSocket;
import org.rds4j.RdsSocketOptions;
import org.rds4j.RdsStack;
import org.rds4j.RdsStackConfig;

/**
 * A second RDS host in its own JVM for {@link TwoJvmTest}: binds {@code address:port}, echoes every message back to
 * its source, prints READY once bound, and exits when its standard input closes (so it never outlives the test).
 */
public final class EchoPeerMain {
    private EchoPeerMain() {
    }

    public static void main(String[] args) throws Exception {
        InetAddress address = InetAddress.getByName(args[0]);
        int tcpPort = Integer.parseInt(args[1]);
        int port = Integer.parseInt(args[2]);
        try (RdsStack stack = RdsStack.create(RdsStackConfig.builder().name("peer").address(address)
                .tcpPort(tcpPort).defaultTransport("tcp").build());
             RdsSocket s = stack.openSocket()) {
            s.setOption(RdsSocketOptions.SO_SNDBUF, 4 << 20);
            s.setOption(RdsSocketOptions.SO_RCVBUF, 4 << 20);
            s.bind(new InetSocketAddress(address, port));
            Thread watchdog = new Thread(() -> {
                try {
                    while (System.in.read() >= 0) {
                        // drain until the parent closes our stdin or dies
                    }
                } catch (Exception ignored) {
                    // the parent is gone either way
                }
                System.exit(0);
            }, "stdin-watchdog");
            watchdog.setDaemon(true);
            watchdog.start();
            System.out.println("READY " + s.localAddress());
            System.out.flush();
            while (true) {
                Optional<RdsDatagram> d = s.receive(Duration.ofSeconds(1));
                if (d.isPresent()) {
                    s.send(d.get().payload().duplicate(), d.get().source());
                }
            }
        }
    }
}
