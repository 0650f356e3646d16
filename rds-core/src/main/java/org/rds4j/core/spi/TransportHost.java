package org.rds4j.core.spi;

import java.util.concurrent.ScheduledExecutorService;
import org.rds4j.RdsStackConfig;

/** What the core offers a transport instance: its stack's settings and the decision on incoming connections. */
public interface TransportHost {

    /**
     * The stack's configuration (TCP port, transport properties).
     *
     * @return the configuration the stack was made with
     */
    RdsStackConfig config();

    /**
     * A peer opened a connection to one of this stack's listeners. The core decides, as the kernel's accept path
     * does, whether to keep it (returning the handler that takes it over) or refuse it (returning {@code null}; the
     * transport then resets the connection).
     *
     * <p>Called on the connection's I/O thread, before any byte of it is delivered.
     *
     * @param connection the connection the peer opened
     * @return the handler for the connection, or {@code null} to refuse it
     */
    ConnectionHandler accept(TransportConnection connection);

    /**
     * Whether the stack's allow-list admits connections from {@code peer}, asked before work that costs something
     * for every connection (a TLS handshake), so that a peer the stack would refuse anyway costs no more. A refusal
     * is counted and logged as {@link #accept} counts and logs it; {@link #accept} still decides afterwards.
     *
     * @param peer the address the connection came from
     * @return false if the stack refuses the peer
     */
    boolean admits(java.net.InetAddress peer);

    /**
     * A TLS handshake failed, on a connection this stack made or one a peer made: counted in
     * {@code conn_tls_handshake_failed}. A transport without TLS never calls it. Any thread.
     */
    void tlsHandshakeFailed();

    /**
     * A scheduler for a transport's timers; owned by the stack, so do not shut it down.
     *
     * @return the stack's scheduler
     */
    ScheduledExecutorService scheduler();

    /**
     * The stack's account of direct memory: a transport counts its buffer pools in it ({@link OffHeapMemory#addPool})
     * and takes them out when it closes.
     *
     * @return the stack's off-heap account
     */
    OffHeapMemory offHeap();
}
