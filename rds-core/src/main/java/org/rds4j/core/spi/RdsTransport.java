package org.rds4j.core.spi;

import java.io.IOException;

/**
 * A way of carrying RDS frames between hosts, found with {@link java.util.ServiceLoader}: the part the kernel's
 * {@code struct rds_transport} plays. A transport moves bytes and reports connection events; every protocol
 * decision (who connects, sequence numbers, congestion, ping) is the core's.
 *
 * <p>Implementations are stateless factories; {@link #open} creates the per-stack state.
 */
public interface RdsTransport {

    /**
     * The name sockets choose this transport by, such as {@code "tcp"} or {@code "loopback"}.
     *
     * @return the transport's name, unique among those present
     */
    String name();

    /**
     * Which transport a stack picks by default when several are present: the highest wins.
     *
     * @return the priority; 0 unless overridden
     */
    default int defaultPriority() {
        return 0;
    }

    /**
     * Starts this transport for one stack. Called at most once per stack, on first use.
     *
     * @param host the stack, which gives the settings and decides on incoming connections
     * @return the transport's state for that stack
     * @throws IOException if the transport cannot start, such as when its I/O threads cannot be made
     */
    TransportInstance open(TransportHost host) throws IOException;
}
