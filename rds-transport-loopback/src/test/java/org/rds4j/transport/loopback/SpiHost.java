package org.rds4j.transport.loopback;

import java.net.InetAddress;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.Function;
import org.rds4j.RdsStackConfig;
import org.rds4j.core.spi.ConnectionHandler;
import org.rds4j.core.spi.OffHeapMemory;
import org.rds4j.core.spi.TransportConnection;
import org.rds4j.core.spi.TransportHost;

/**
 * A stack as the transport sees it, for tests that drive the transport through its SPI: its configuration, its timer,
 * and who takes accepted connections. It admits every peer.
 *
 * @param acceptor the handler for each accepted connection, given the connection (an accepted end hears no
 *     {@code onConnected})
 */
record SpiHost(RdsStackConfig config, ScheduledExecutorService scheduler,
               Function<TransportConnection, ConnectionHandler> acceptor) implements TransportHost {
    private static final OffHeapMemory OFF_HEAP = new OffHeapMemory(RdsStackConfig.builder().build().offHeapBytes());

    /** A host whose accepted connections all go to {@code handler} ({@code null}: none is accepted). */
    static SpiHost accepting(RdsStackConfig config, ScheduledExecutorService scheduler, ConnectionHandler handler) {
        return new SpiHost(config, scheduler, c -> handler);
    }

    @Override
    public ConnectionHandler accept(TransportConnection connection) {
        return acceptor.apply(connection);
    }

    @Override
    public boolean admits(InetAddress peer) {
        return true;
    }

    @Override
    public void tlsHandshakeFailed() {
        throw new AssertionError("the loopback transport has no TLS");
    }

    @Override
    public OffHeapMemory offHeap() {
        return OFF_HEAP;
    }
}
