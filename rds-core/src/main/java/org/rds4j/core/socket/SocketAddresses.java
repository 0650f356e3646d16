package org.rds4j.core.socket;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import org.rds4j.EinvalException;
import org.rds4j.EopnotsuppException;

/**
 * What RDS accepts as a local address to bind and as a destination, with the kernel's errno for each refusal; and
 * addresses as messages and inspection print them, IPv6 in its short form.
 */
public final class SocketAddresses {
    private SocketAddresses() {
    }

    /** The address to bind: one resolved unicast address, and not the probe's port 1. */
    static InetAddress checkBind(InetSocketAddress address) throws EinvalException {
        if (address.isUnresolved()) {
            throw new EinvalException("bind needs a resolved local address, not " + address);
        }
        InetAddress a = address.getAddress();
        if (a.isAnyLocalAddress() || a.isMulticastAddress() || isBroadcast(a)) {
            throw new EinvalException("cannot bind " + host(a)
                    + ": RDS binds one unicast address (there is no wildcard bind)");
        }
        if (address.getPort() == 1) {
            throw new EinvalException("RDS port 1 is reserved for the multipath probe; bind another port");
        }
        return a;
    }

    /** The destination of a send from {@code from}: resolved, unicast, of the same IP family. */
    static InetAddress checkDestination(InetSocketAddress destination, InetSocketAddress from)
            throws java.io.IOException {
        if (destination.isUnresolved()) {
            throw new EinvalException("destination " + destination.getHostString() + " is not resolved; resolve it"
                    + " first");
        }
        InetAddress to = destination.getAddress();
        if (to.isAnyLocalAddress() || to.isMulticastAddress() || isBroadcast(to)) {
            throw new EinvalException("cannot send to " + host(to) + ": RDS sends to one unicast address");
        }
        if ((to instanceof Inet4Address) != (from.getAddress() instanceof Inet4Address)) {
            throw new EopnotsuppException("the socket is bound to " + host(from.getAddress())
                    + " and cannot send to " + host(to) + " of the other IP family");
        }
        return to;
    }

    /** An address as rds4j prints it, IPv6 short ({@link org.rds4j.RdsAddresses#format(InetAddress)}). */
    public static String host(InetAddress address) {
        return org.rds4j.RdsAddresses.format(address);
    }

    /** {@code 127.0.0.1:4000} or {@code [fd00::2]:4000}, as {@link org.rds4j.RdsAddresses} prints them. */
    public static String format(InetSocketAddress a) {
        return org.rds4j.RdsAddresses.format(a);
    }

    private static boolean isBroadcast(InetAddress a) {
        byte[] b = a.getAddress();
        return b.length == 4 && b[0] == (byte) 0xFF && b[1] == (byte) 0xFF && b[2] == (byte) 0xFF
                && b[3] == (byte) 0xFF;
    }
}
