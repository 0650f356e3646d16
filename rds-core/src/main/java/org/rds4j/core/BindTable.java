package org.rds4j.core;

import java.net.InetAddress;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.function.IntUnaryOperator;
import org.rds4j.EaddrinuseException;

/**
 * Which socket holds which (address, port): the kernel's bind hash. Port 0 asks for a free port, searched from a
 * random start upwards as the kernel does, skipping 0 and the reserved probe port 1.
 */
final class BindTable {
    private final Map<Key, CoreSocket> bound = new HashMap<>();
    private final Map<InetAddress, Integer> socketsPerAddress = new HashMap<>();

    /**
     * Binds {@code socket} at {@code address:port}, or at a free port if {@code port} is 0.
     *
     * @param randomStart gives a random number below its argument, for the ephemeral search start
     * @return the port bound
     */
    synchronized int bind(InetAddress address, int port, CoreSocket socket, IntUnaryOperator randomStart)
            throws EaddrinuseException {
        if (port != 0) {
            if (bound.putIfAbsent(new Key(address, port), socket) != null) {
                throw new EaddrinuseException(address.getHostAddress() + ":" + port
                        + " is already bound by another socket of this stack; bind another port, or port 0 for"
                        + " a free one");
            }
            socketsPerAddress.merge(address, 1, Integer::sum);
            return port;
        }
        int start = Math.max(randomStart.applyAsInt(65536), 2);
        for (int i = 0; i < 65536; i++) {
            int candidate = (start + i) & 0xFFFF;
            if (candidate < 2) {
                continue;
            }
            if (bound.putIfAbsent(new Key(address, candidate), socket) == null) {
                socketsPerAddress.merge(address, 1, Integer::sum);
                return candidate;
            }
        }
        throw new EaddrinuseException("every RDS port of " + address.getHostAddress()
                + " is bound; close sockets before binding more");
    }

    synchronized void unbind(InetAddress address, int port, CoreSocket socket) {
        if (bound.remove(new Key(address, port), socket)) {
            socketsPerAddress.computeIfPresent(address, (a, n) -> n == 1 ? null : n - 1);
        }
    }

    synchronized CoreSocket lookup(InetAddress address, int port) {
        return bound.get(new Key(address, port));
    }

    /** Whether any socket of this stack is bound on {@code address}: then the address is this host's own. */
    synchronized boolean hasAddress(InetAddress address) {
        return socketsPerAddress.containsKey(address);
    }

    private static final class Key {
        final InetAddress address;
        final int port;

        Key(InetAddress address, int port) {
            this.address = address;
            this.port = port;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Key && ((Key) o).port == port && ((Key) o).address.equals(address);
        }

        @Override
        public int hashCode() {
            return Objects.hash(address, port);
        }
    }
}
