package org.rds4j.tools;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;

/** Parses {@code ADDR:PORT} ({@code 127.0.0.1:4000}, {@code [::1]:4000}) and bare addresses from the command line. */
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

    /** {@code 127.0.0.1:4000} or {@code [::1]:4000}, without the host-name part Java puts in front. */
    static String format(InetSocketAddress a) {
        String host = a.getAddress() != null ? a.getAddress().getHostAddress() : a.getHostString();
        return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + a.getPort();
    }
}
