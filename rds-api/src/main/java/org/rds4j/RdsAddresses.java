package org.rds4j;

import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.Objects;

/**
 * Addresses as rds4j prints them everywhere (messages, {@link RdsStack#info()}'s JMX face, {@code rds4j info},
 * metric tags): IPv4 dotted, IPv6 in the short form {@code ip} and {@code inet_ntop} print, never Java's long
 * {@code fd00:0:0:0:0:0:0:2}.
 */
public final class RdsAddresses {
    private RdsAddresses() {
    }

    /**
     * An address as rds4j prints it: IPv4 dotted; IPv6 in the short form of RFC 5952 ({@code fd00::2},
     * {@code ::1}): lower-case hex without leading zeros, the longest run of two or more zero groups (the first of
     * equal runs) as {@code ::}, and a scope ({@code %eth0}) kept.
     *
     * @param address an IPv4 or IPv6 address
     * @return its text
     */
    public static String format(InetAddress address) {
        Objects.requireNonNull(address, "address is null: pass an InetAddress");
        if (!(address instanceof Inet6Address)) {
            return address.getHostAddress();
        }
        byte[] b = address.getAddress();
        int[] groups = new int[8];
        for (int i = 0; i < 8; i++) {
            groups[i] = ((b[2 * i] & 0xff) << 8) | (b[2 * i + 1] & 0xff);
        }
        int runStart = -1;
        int runLength = 1;                            // a lone zero group stays "0"
        for (int i = 0; i < 8; ) {
            int start = i;
            while (i < 8 && groups[i] == 0) {
                i++;
            }
            if (i - start > runLength) {
                runStart = start;
                runLength = i - start;
            }
            i = Math.max(i, start + 1);
        }
        StringBuilder s = new StringBuilder(40);
        for (int i = 0; i < 8; i++) {
            if (i == runStart) {
                s.append("::");
                i += runLength - 1;
            } else {
                if (s.length() > 0 && s.charAt(s.length() - 1) != ':') {
                    s.append(':');
                }
                s.append(Integer.toHexString(groups[i]));
            }
        }
        String full = address.getHostAddress();
        int percent = full.indexOf('%');
        return percent < 0 ? s.toString() : s + full.substring(percent);
    }

    /**
     * An address and port as rds4j prints them: {@code 127.0.0.1:4000}, {@code [fd00::2]:4000}.
     *
     * @param address the address and port; an unresolved one prints its host name; may be {@code null}
     * @return its text, or {@code "none"} for {@code null}
     */
    public static String format(InetSocketAddress address) {
        if (address == null) {
            return "none";
        }
        String h = address.getAddress() != null ? format(address.getAddress()) : address.getHostString();
        return (h.indexOf(':') >= 0 ? "[" + h + "]" : h) + ":" + address.getPort();
    }
}
