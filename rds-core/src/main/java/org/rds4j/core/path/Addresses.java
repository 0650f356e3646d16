package org.rds4j.core.path;

import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import org.rds4j.RdsAddresses;

/** Address rules of RDS that decide who connects. */
public final class Addresses {
    private Addresses() {
    }

    /**
     * Compares two addresses as the kernel does: as 128-bit unsigned big-endian numbers, IPv4 as v4-mapped IPv6,
     * which for two IPv4 addresses is their comparison as unsigned 32-bit numbers.
     *
     * @param a an IPv4 or IPv6 address
     * @param b another
     * @return negative, zero or positive as {@code a} is below, equal to or above {@code b}
     */
    public static int compare(InetAddress a, InetAddress b) {
        byte[] x = mapped(a);
        byte[] y = mapped(b);
        for (int i = 0; i < 16; i++) {
            int c = Integer.compare(x[i] & 0xFF, y[i] & 0xFF);
            if (c != 0) {
                return c;
            }
        }
        return 0;
    }

    /**
     * Whether the host at {@code local} opens (and reopens) the transport connection to {@code peer}: only the
     * numerically smaller address keeps connections it initiates.
     *
     * @param local our address
     * @param peer the peer's address
     * @return true if {@code local} is the smaller of the two
     */
    public static boolean initiates(InetAddress local, InetAddress peer) {
        return compare(local, peer) < 0;
    }

    /**
     * Turns a v4-mapped IPv6 address (as the kernel's dual-stack listener reports peers) into IPv4.
     *
     * @param a any address
     * @return the IPv4 address if {@code a} is v4-mapped, otherwise {@code a} itself
     */
    public static InetAddress normalize(InetAddress a) {
        if (a instanceof Inet6Address) {
            byte[] b = a.getAddress();
            boolean mapped = b[10] == (byte) 0xFF && b[11] == (byte) 0xFF;
            for (int i = 0; i < 10 && mapped; i++) {
                mapped = b[i] == 0;
            }
            if (mapped) {
                try {
                    return InetAddress.getByAddress(new byte[] {b[12], b[13], b[14], b[15]});
                } catch (UnknownHostException e) {
                    throw new AssertionError(e);
                }
            }
        }
        return a;
    }

    private static byte[] mapped(InetAddress a) {
        byte[] raw = a.getAddress();
        if (a instanceof Inet4Address) {
            byte[] m = new byte[16];
            m[10] = (byte) 0xFF;
            m[11] = (byte) 0xFF;
            System.arraycopy(raw, 0, m, 12, 4);
            return m;
        }
        return raw;
    }

    /**
     * An address as rds4j prints it: IPv4 dotted; IPv6 in the short form of RFC 5952, as {@code ip} and
     * {@code inet_ntop} print it ({@code fd00::2}, where Java's {@code getHostAddress} gives
     * {@code fd00:0:0:0:0:0:0:2}): lower-case hex without leading zeros, the longest run of two or more zero groups
     * (the first of equal runs) as {@code ::}, and a scope ({@code %eth0}) kept.
     *
     * @param address an IPv4 or IPv6 address
     * @return its text
     */
    public static String host(InetAddress address) {
        return RdsAddresses.format(address);
    }
}
