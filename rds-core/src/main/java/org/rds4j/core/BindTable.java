package org.rds4j.core;

import java.net.InetAddress;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.function.IntUnaryOperator;
import org.rds4j.EaddrinuseException;

/**
 * Which socket holds which (address, port): the kernel's bind hash. Port 0 asks for a free port, searched from a
 * random start upwards as the kernel does, skipping 0 and the reserved probe port 1. The stack also reserves a few
 * ports for itself ({@link #RESERVED}), which no socket can then bind.
 */
final class BindTable {
    /** The owner of a port the stack keeps for its own pings. */
    static final Object RESERVED = new Object() {
        @Override
        public String toString() {
            return "reserved by the stack";
        }
    };

    private final Map<Key, Object> bound = new HashMap<>();
    private final Map<InetAddress, Integer> socketsPerAddress = new HashMap<>();

    /**
     * Binds {@code socket} at {@code address:port}, or at a free port if {@code port} is 0.
     *
     * @param randomStart gives a random number below its argument, for the ephemeral search start
     * @return the port bound
     */
    synchronized int bind(InetAddress address, int port, Object socket, IntUnaryOperator randomStart)
            throws EaddrinuseException {
        if (port != 0) {
            Object holder = bound.putIfAbsent(new Key(address, port), socket);
            if (holder != null) {
                throw new EaddrinuseException(address.getHostAddress() + ":" + port + " is already bound ("
                        + (holder == RESERVED ? "the stack uses it for its acknowledgement pings" : "by another"
                        + " socket of this stack") + "); bind another port, or port 0 for a free one");
            }
            countSocket(address, socket);
            return port;
        }
        int start = Math.max(randomStart.applyAsInt(65536), 2);
        for (int i = 0; i < 65536; i++) {
            int candidate = (start + i) & 0xFFFF;
            if (candidate < 2) {
                continue;
            }
            if (bound.putIfAbsent(new Key(address, candidate), socket) == null) {
                countSocket(address, socket);
                return candidate;
            }
        }
        throw new EaddrinuseException("every RDS port of " + address.getHostAddress()
                + " is bound; close sockets before binding more");
    }

    /** Only sockets make an address this host's own; the stack's reserved ports do not. */
    private void countSocket(InetAddress address, Object owner) {
        if (owner != RESERVED) {
            socketsPerAddress.merge(address, 1, Integer::sum);
        }
    }

    synchronized void unbind(InetAddress address, int port, CoreSocket socket) {
        if (bound.remove(new Key(address, port), socket)) {
            socketsPerAddress.computeIfPresent(address, (a, n) -> n == 1 ? null : n - 1);
        }
    }

    /** The socket bound at {@code address:port}, or {@code null} (also for a reserved port). */
    synchronized CoreSocket lookup(InetAddress address, int port) {
        Object o = bound.get(new Key(address, port));
        return o instanceof CoreSocket ? (CoreSocket) o : null;
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
