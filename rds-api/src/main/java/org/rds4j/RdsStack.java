package org.rds4j;

import java.io.IOException;
import java.util.Map;
import java.util.Objects;
import java.util.ServiceLoader;
import org.rds4j.spi.RdsStackProvider;

/**
 * One RDS host: its transports, transport listeners, connections to peers, congestion maps and threads, much like
 * the kernel's RDS in one network namespace. Sockets of one stack share connections: N sockets talk to a peer host
 * over one connection, not N.
 *
 * <p>Most programs use the JVM-wide {@link #defaultStack()}, which {@link RdsSocket#open()} picks. Tests and tools
 * create several stacks in one JVM, one per simulated host (say 127.0.0.1 and 127.0.0.2), with
 * {@link #create(RdsStackConfig)}.
 */
public interface RdsStack extends AutoCloseable {

    /**
     * The JVM-wide stack, created with default settings on first use and closed at JVM exit.
     *
     * @return the default stack
     */
    static RdsStack defaultStack() {
        return DefaultStackHolder.get();
    }

    /**
     * The version of rds4j on the class or module path, as its build recorded it (for example {@code 0.1.0} or
     * {@code 0.1.0-SNAPSHOT}); {@code "unknown"} for classes built without the build's resources.
     *
     * @return rds4j's version
     */
    static String version() {
        return Rds4jVersion.VERSION;
    }

    /**
     * Creates a new stack; close it when done.
     *
     * @param config the stack's settings: its name, addresses, TCP port, default transport, buffer sizes
     * @return the new stack
     * @throws IllegalStateException no implementation ({@code rds-core} and a transport) is on the class or module
     *         path
     * @throws IllegalArgumentException the configuration's {@linkplain RdsStackConfig#defaultTransport() default
     *         transport} is not installed; the message lists the installed ones
     */
    static RdsStack create(RdsStackConfig config) {
        Objects.requireNonNull(config, "config is null: pass a configuration, such as"
                + " RdsStackConfig.builder().build()");
        return provider().create(config);
    }

    /**
     * Opens a socket on this stack.
     *
     * @return a new, unbound, blocking socket
     * @throws EbadfException the stack is closed: open sockets on a stack that is still open, or create a new one
     */
    RdsSocket openSocket() throws IOException;

    /**
     * Opens a selector to wait on many sockets of this stack at once.
     *
     * @return a new selector with no sockets registered
     */
    RdsSelector openSelector();

    /**
     * The configuration this stack was created with.
     *
     * @return the configuration
     */
    RdsStackConfig config();

    /**
     * A snapshot of this stack's counters, named as the kernel's RDS statistics ({@code conn_reset},
     * {@code recv_drop_old_seq}, {@code send_queued}, ...), in a stable order.
     *
     * @return counter names and values; a copy, not updated afterwards
     */
    Map<String, Long> counters();

    /**
     * A snapshot of this stack for inspection, as {@code rds-info} shows Linux RDS: connections and their paths,
     * sockets, congestion maps and counters. Safe from any thread while traffic flows; each path is read under its
     * own lock for as long as it takes to count its queued messages, so call it now and then (a monitoring poll),
     * not per message. The same figures are published through JMX (see {@link RdsStackConfig#jmx()}).
     *
     * @return an immutable snapshot
     */
    RdsStackInfo info();

    /**
     * Adds a listener told when a peer becomes unreachable, refuses this host, or comes back up (see
     * {@link RdsPeerState} and {@link RdsStackConfig#peerFailureThreshold()}). Events come on the stack's event
     * thread, never on an I/O thread. The stack's JMX MBean sends the same events as notifications.
     *
     * @param listener the listener; adding one twice calls it twice
     * @throws NullPointerException if {@code listener} is null
     */
    void addPeerStateListener(RdsPeerStateListener listener);

    /**
     * Removes a listener added with {@link #addPeerStateListener}; nothing if it was not added.
     *
     * @param listener the listener
     */
    void removePeerStateListener(RdsPeerStateListener listener);

    /** Closes every socket and connection of this stack and stops its threads. Idempotent. */
    @Override
    void close();

    private static RdsStackProvider provider() {
        return ServiceLoader.load(RdsStackProvider.class, RdsStack.class.getClassLoader())
                .findFirst()
                .orElseThrow(() -> new IllegalStateException(
                        "no rds4j implementation found: add org.rds4j:rds-core and a transport "
                                + "(rds-transport-tcp or rds-transport-loopback) to the class or module path"));
    }
}
