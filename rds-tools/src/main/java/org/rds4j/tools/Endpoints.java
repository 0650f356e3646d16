package org.rds4j.tools;

import java.io.IOException;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ProtocolFamily;
import java.net.StandardProtocolFamily;
import java.net.UnknownHostException;
import java.nio.channels.DatagramChannel;
import org.rds4j.RdsAddresses;

/**
 * Parses {@code ADDR:PORT} ({@code 127.0.0.1:4000}, {@code [::1]:4000}) and bare addresses from the command line,
 * and formats addresses the one way every tool prints them (IPv6 short: {@link #host}).
 */
final class Endpoints {
    private Endpoints() {
    }

    static InetSocketAddress parse(String option, String text) throws UsageException {
        String host;
        String port;
        if (text.startsWith("[")) {
            int close = text.indexOf("]:");
            if (close < 0) {
                throw new UsageException("--" + option + " needs [ADDR]:PORT for IPv6, got '" + text + "'");
            }
            host = text.substring(1, close);
            port = text.substring(close + 2);
        } else {
            int colon = text.lastIndexOf(':');
            if (colon < 0 || text.indexOf(':') != colon) {
                throw new UsageException("--" + option + " needs ADDR:PORT, got '" + text + "'");
            }
            host = text.substring(0, colon);
            port = text.substring(colon + 1);
        }
        int p;
        try {
            p = Integer.parseInt(port);
        } catch (NumberFormatException e) {
            throw new UsageException("--" + option + ": bad port in '" + text + "'", e);
        }
        if (p < 0 || p > 65535) {
            throw new UsageException("--" + option + ": port must be 0..65535, got " + p);
        }
        return new InetSocketAddress(address(option, host), p);
    }

    static InetAddress address(String option, String text) throws UsageException {
        if (text.isEmpty()) {
            throw new UsageException("--" + option + ": missing address");
        }
        try {
            return InetAddress.getByName(text);
        } catch (UnknownHostException e) {
            throw new UsageException("--" + option + ": unknown address '" + text + "'", e);
        }
    }

    /**
     * {@code 127.0.0.1:4000} or {@code [fd00::2]:4000}, without the host-name part Java puts in front and with IPv6
     * in its short form ({@link #host}).
     */
    static String format(InetSocketAddress a) {
        String host = a.getAddress() != null ? host(a.getAddress()) : a.getHostString();
        return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + a.getPort();
    }

    /**
     * An address as the tools print it: IPv4 dotted, IPv6 in the short form of RFC 5952 as {@code ip} and
     * {@code inet_ntop} print it ({@code fd00::2}, {@code ::1}; Java's {@code getHostAddress} gives
     * {@code fd00:0:0:0:0:0:0:2}): lower-case hex without leading zeros, the longest run of two or more zero groups
     * (the first of equal runs) as {@code ::}, and a scope ({@code %eth0}) kept.
     */
    static String host(InetAddress address) {
        return RdsAddresses.format(address);
    }

    /**
     * The local address the kernel's route to {@code destination} would use as source, as rds-ping picks it:
     * a UDP socket connected to the destination (which sends nothing) and then asked for its local address. For a
     * 127.x destination that is 127.0.0.1, for ::1 it is ::1.
     *
     * @throws IOException there is no route to {@code destination} (the message says so)
     */
    static InetAddress routeSource(InetAddress destination) throws IOException {
        ProtocolFamily family = destination instanceof Inet6Address ? StandardProtocolFamily.INET6
                : StandardProtocolFamily.INET;
        InetAddress local;
        try (DatagramChannel udp = DatagramChannel.open(family)) {
            udp.connect(new InetSocketAddress(destination, 1));
            local = ((InetSocketAddress) udp.getLocalAddress()).getAddress();
        } catch (IOException e) {
            throw new IOException("no route to " + host(destination) + ": " + e.getMessage(), e);
        }
        if (local.isAnyLocalAddress()) {
            throw new IOException("no source address for " + host(destination));
        }
        return local;
    }
}
