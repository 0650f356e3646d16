package org.rds4j.core.stack;

import java.lang.reflect.Field;
import java.net.ConnectException;
import java.net.InetAddress;
import java.util.Map;
import org.rds4j.core.spi.ConnectionHandler;
import org.rds4j.core.spi.RdsTransport;
import org.rds4j.core.spi.TransportInstance;

/**
 * What the in-process test transports of rds-core ({@link CapturingTransport}, {@link FuzzTransport}) share: they
 * bind anything, never listen, and only accept (every connect of the core fails at once); and, since rds-core's tests
 * have no transport on the service path, they are put into a stack's transport table by reflection.
 */
final class AcceptingTransports {
    private AcceptingTransports() {
    }

    /** Adds {@code transport} to {@code stack}'s table under its name; returns it. */
    static <T extends RdsTransport> T install(CoreStack stack, T transport) throws ReflectiveOperationException {
        Field f = CoreStack.class.getDeclaredField("transports");
        f.setAccessible(true);
        @SuppressWarnings("unchecked")
        Map<String, TransportBinding> transports = (Map<String, TransportBinding>) f.get(stack);
        transports.put(transport.name(), new TransportBinding(stack, transport));
        return transport;
    }

    /**
     * An instance that binds anything and fails every connect with {@code why}, after running {@code onConnect}; every
     * connection's I/O thread is {@code io}.
     */
    static TransportInstance acceptOnly(String why, Runnable onConnect, TestIoThread io) {
        return new TransportInstance() {
            @Override
            public org.rds4j.core.spi.IoThread ioThread(InetAddress local, InetAddress peer) {
                return io;
            }

            @Override
            public boolean canBind(InetAddress address) {
                return true;
            }

            @Override
            public void listen(InetAddress local) {
            }

            @Override
            public void unlisten(InetAddress local) {
            }

            @Override
            public void connect(InetAddress local, InetAddress peer, int pathIndex, ConnectionHandler handler) {
                onConnect.run();
                io.execute(() -> handler.onConnectFailed(new ConnectException(why)));
            }

            @Override
            public void close() {
                io.close();
            }
        };
    }
}
