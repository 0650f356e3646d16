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
     * A scheduler for a transport's timers; owned by the stack, so do not shut it down.
     *
     * @return the stack's scheduler
     */
    ScheduledExecutorService scheduler();
}
