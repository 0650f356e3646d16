package org.rds4j.core.stack;

import org.rds4j.core.socket.CoreSocket;
import org.rds4j.core.socket.SocketAddresses;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.IntUnaryOperator;
import org.rds4j.EaddrinuseException;

/**
 * Which socket holds which (address, port): the kernel's bind hash. Port 0 asks for a free port, searched from a
 * random start upwards as the kernel does, skipping 0 and the reserved probe port 1. The stack also reserves a few
 * ports for its acknowledgement pings ({@link #RESERVED}): the free-port search skips them, and a socket that asks for
 * one by number takes it over (the stack then stops using it).
 */
public final class BindTable {
    /** The owner of a port the stack keeps for its own pings. */
    static final Object RESERVED = new Object() {
        @Override
        public String toString() {
            return "reserved by the stack";
        }
    };

    private final ConcurrentHashMap<InetAddress, AddressPorts> addresses = new ConcurrentHashMap<>();

    /**
     * Binds {@code socket} at {@code address:port}, or at a free port if {@code port} is 0.
     *
     * @param address the local address
     * @param port the RDS port, or 0 for a free one
     * @param socket what the table keeps for the port
     * @param randomStart gives a random number below its argument, for the ephemeral search start
     * @return the port bound
     * @throws EaddrinuseException the port is taken, or no port is free
     */
    public synchronized int bind(InetAddress address, int port, Object socket, IntUnaryOperator randomStart)
            throws EaddrinuseException {
        AddressPorts ports = addresses.computeIfAbsent(address, a -> new AddressPorts());
        if (port != 0) {
            // A port the stack reserved for its acknowledgement pings yields to an application that asks for it by
            // number: a kernel would never refuse that bind. The stack stops pinging from it (see isReserved).
            if (!ports.putIfAbsent(port, socket) && !(socket != RESERVED && ports.replace(port, RESERVED, socket))) {
                throw new EaddrinuseException(SocketAddresses.format(new InetSocketAddress(address, port))
                        + " is already bound by another socket of this stack; bind another port, or port 0 for a"
                        + " free one");
            }
            countSocket(ports, socket, 1);
            return port;
        }
        int start = Math.max(randomStart.applyAsInt(65536), 2);
        for (int i = 0; i < 65536; i++) {
            int candidate = (start + i) & 0xFFFF;
            if (candidate < 2) {
                continue;
            }
            if (ports.putIfAbsent(candidate, socket)) {
                countSocket(ports, socket, 1);
                return candidate;
            }
        }
        throw new EaddrinuseException("every RDS port of " + SocketAddresses.host(address)
                + " is bound; close sockets before binding more");
    }

    /** Only sockets make an address this host's own; the stack's reserved ports do not. */
    private static void countSocket(AddressPorts ports, Object owner, int delta) {
        if (owner != RESERVED) {
            ports.sockets += delta;                 // under the table's monitor
        }
    }

    /**
     * Frees {@code address:port} if {@code socket} holds it.
     *
     * @param address the local address
     * @param port the RDS port
     * @param socket the socket that bound it
     */
    public synchronized void unbind(InetAddress address, int port, CoreSocket socket) {
        AddressPorts ports = addresses.get(address);
        if (ports != null && ports.remove(port, socket)) {
            countSocket(ports, socket, -1);
        }
    }

    /** The socket bound at {@code address:port}, or {@code null} (also for a reserved port). Any thread, no lock. */
    CoreSocket lookup(InetAddress address, int port) {
        AddressPorts ports = addresses.get(address);
        Object o = ports == null ? null : ports.get(port);
        return o instanceof CoreSocket ? (CoreSocket) o : null;
    }

    /** Whether {@code address:port} is still the stack's own (not taken over by a socket since). Any thread, no lock. */
    boolean isReserved(InetAddress address, int port) {
        AddressPorts ports = addresses.get(address);
        return ports != null && ports.get(port) == RESERVED;
    }

    /** Whether any socket of this stack is bound on {@code address}: then the address is this host's own. */
    boolean hasAddress(InetAddress address) {
        AddressPorts ports = addresses.get(address);
        return ports != null && ports.sockets > 0;
    }
}
