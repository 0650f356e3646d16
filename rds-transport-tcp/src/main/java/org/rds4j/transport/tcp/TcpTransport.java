package org.rds4j.transport.tcp;

import java.io.IOException;
import org.rds4j.core.spi.RdsTransport;
import org.rds4j.core.spi.TransportHost;
import org.rds4j.core.spi.TransportInstance;

/**
 * The {@code "tcp"} transport: RDS over TCP, wire-compatible with the Linux kernel's {@code rds_tcp}. Found with
 * {@link java.util.ServiceLoader}; stateless, each {@link #open} starts an independent {@link TcpTransportInstance}
 * with its own event loops, so that two stacks in one JVM are as separate as two hosts.
 *
 * <p>Its priority (10) is above the loopback transport's (0): a stack that has both picks TCP by default, as a Linux
 * host uses TCP for RDS between its own addresses unless a socket asks for loopback.
 */
public final class TcpTransport implements RdsTransport {
    /** The name sockets select this transport by. */
    public static final String NAME = "tcp";

    /** Public for {@link java.util.ServiceLoader}. */
    public TcpTransport() {
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public int defaultPriority() {
        return 10;
    }

    @Override
    public TransportInstance open(TransportHost host) throws IOException {
        return new TcpTransportInstance(host);
    }

    @Override
    public String toString() {
        return "TcpTransport";
    }
}
