package org.rds4j.core.stack;

import org.rds4j.core.socket.SocketAddresses;

import java.io.IOException;
import java.net.InetAddress;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.ScheduledExecutorService;
import org.rds4j.EaddrinuseException;
import org.rds4j.EaddrnotavailException;
import org.rds4j.RdsStackConfig;
import org.rds4j.core.spi.ConnectionHandler;
import org.rds4j.core.spi.RdsTransport;
import org.rds4j.core.spi.TransportConnection;
import org.rds4j.core.spi.TransportHost;
import org.rds4j.core.spi.TransportInstance;

/** One transport as used by one stack: the instance, the addresses it listens on, and the stack as its host. */
public final class TransportBinding implements TransportHost {
    private final CoreStack stack;
    private final RdsTransport transport;
    private final Set<InetAddress> listening = new HashSet<>();
    private TransportInstance instance;

    TransportBinding(CoreStack stack, RdsTransport transport) {
        this.stack = stack;
        this.transport = transport;
    }

    String name() {
        return transport.name();
    }

    synchronized TransportInstance instance() throws IOException {
        if (instance == null) {
            instance = transport.open(this);
        }
        return instance;
    }

    /**
     * Checks that a socket may bind {@code address} over this transport and makes sure the transport listens on it.
     *
     * @param address the address a socket asks to bind
     * @throws IOException the transport cannot be opened
     * @throws EaddrnotavailException if the address is not one of the stack's or not local to the transport
     * @throws EaddrinuseException if the transport cannot listen there (another RDS host uses the address and port)
     */
    public void prepareBind(InetAddress address) throws IOException {
        RdsStackConfig config = stack.config();
        if (!config.addresses().isEmpty() && !config.addresses().contains(address)) {
            throw new EaddrnotavailException(SocketAddresses.host(address) + " is not an address of stack '"
                    + config.name() + "' (its addresses: " + config.addresses().stream()
                    .map(SocketAddresses::host).toList() + ")");
        }
        if (!instance().canBind(address)) {
            throw new EaddrnotavailException(SocketAddresses.host(address) + " is not a local address for the "
                    + name() + " transport; bind an address of this machine");
        }
        try {
            ensureListening(address);
        } catch (IOException e) {
            throw new EaddrinuseException("the " + name() + " transport cannot listen on "
                    + SocketAddresses.host(address) + " port " + config.tcpPort() + " (" + e.getMessage()
                    + "): another RDS host (another process or stack) probably uses it; give this stack another"
                    + " address or TCP port", e);
        }
    }

    /**
     * Listens on {@code address} from the first bind on it until the stack closes: like the kernel, which listens
     * on every address at once, a host stays reachable while it lives even when no socket is bound for a moment.
     */
    synchronized void ensureListening(InetAddress address) throws IOException {
        if (!listening.contains(address)) {
            instance().listen(address);
            listening.add(address);
        }
    }

    synchronized void close() {
        if (instance != null) {
            instance.close();
        }
    }

    @Override
    public RdsStackConfig config() {
        return stack.config();
    }

    @Override
    public ConnectionHandler accept(TransportConnection connection) {
        return stack.accept(this, connection);
    }

    @Override
    public boolean admits(InetAddress peer) {
        return stack.admitsEarly(peer);
    }

    @Override
    public void tlsHandshakeFailed() {
        stack.statistics().increment(RdsCounters.Counter.CONN_TLS_HANDSHAKE_FAILED);
    }

    @Override
    public org.rds4j.core.spi.OffHeapMemory offHeap() {
        return stack.offHeap();
    }

    @Override
    public ScheduledExecutorService scheduler() {
        return stack.scheduler();
    }
}
