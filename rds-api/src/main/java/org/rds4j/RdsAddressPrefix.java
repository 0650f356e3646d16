package org.rds4j;

import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * A block of IPv4 or IPv6 addresses written as a prefix, {@code 10.1.0.0/16} or {@code fd00::/8}; a bare address is
 * a prefix of its full length. Used for {@link RdsStackConfig#allowedPeers()} and {@link RdsTlsConfig#peers()}. Only
 * literal addresses are taken:
 * a host name would need a lookup, and a lookup's answer can change.
 */
public final class RdsAddressPrefix {
    private final byte[] network;
    private final int length;

    private RdsAddressPrefix(byte[] network, int length) {
        this.network = network;
        this.length = length;
    }

    /**
     * Reads a prefix.
     *
     * @param text {@code ADDRESS/LENGTH} or {@code ADDRESS}, the address an IPv4 or IPv6 literal
     * @return the prefix, with the bits past its length cleared
     * @throws IllegalArgumentException if the text is not such a prefix
     */
    public static RdsAddressPrefix parse(String text) {
        Objects.requireNonNull(text, "text is null: pass a prefix such as 10.1.0.0/16, fd00::/8 or a single address");
        String s = text.trim();
        int slash = s.indexOf('/');
        String address = slash < 0 ? s : s.substring(0, slash);
        if (address.isEmpty() || !address.chars().allMatch(c -> Character.digit(c, 16) >= 0 || c == '.' || c == ':')
                || (address.indexOf(':') < 0 && !address.matches("\\d{1,3}(\\.\\d{1,3}){3}"))) {
            throw new IllegalArgumentException("not an IPv4 or IPv6 prefix: \"" + text
                    + "\"; write an address literal with an optional length, such as 10.1.0.0/16 or fd00::/8");
        }
        byte[] bytes;
        try {
            bytes = InetAddress.getByName(address).getAddress();      // a literal: no lookup
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException("not an IPv4 or IPv6 address: \"" + text + "\"", e);
        }
        int bits = bytes.length * 8;
        int length = bits;
        if (slash >= 0) {
            try {
                length = Integer.parseInt(s.substring(slash + 1));
            } catch (NumberFormatException e) {
                length = -1;
            }
            if (length < 0 || length > bits) {
                throw new IllegalArgumentException("the prefix length of \"" + text + "\" must be 0 to " + bits);
            }
        }
        for (int i = 0; i < bytes.length; i++) {
            int keep = Math.max(0, Math.min(8, length - 8 * i));
            bytes[i] &= (byte) (0xff00 >> keep);
        }
        return new RdsAddressPrefix(bytes, length);
    }

    /**
     * Whether {@code address} lies in this block. An IPv4-mapped IPv6 address ({@code ::ffff:10.1.2.3}) is its
     * IPv4 address.
     *
     * @param address any address
     * @return whether its first {@link #length()} bits are this prefix's
     */
    public boolean contains(InetAddress address) {
        Objects.requireNonNull(address, "address is null: pass the InetAddress to look for");
        byte[] a = address.getAddress();
        if (address instanceof Inet6Address && network.length == 4 && isMapped(a)) {
            a = Arrays.copyOfRange(a, 12, 16);
        }
        if (a.length != network.length) {
            return false;
        }
        for (int i = 0; i < a.length && 8 * i < length; i++) {
            int keep = Math.min(8, length - 8 * i);
            int mask = (0xff00 >> keep) & 0xff;
            if ((a[i] & mask) != (network[i] & 0xff)) {
                return false;
            }
        }
        return true;
    }

    /**
     * Whether {@code address} lies in any of {@code prefixes}.
     *
     * @param prefixes the blocks to look in
     * @param address any address
     * @return true if one of them contains it; false for an empty list
     */
    public static boolean anyContains(List<RdsAddressPrefix> prefixes, InetAddress address) {
        Objects.requireNonNull(prefixes, "prefixes is null: pass a list of prefixes (List.of() for none)");
        Objects.requireNonNull(address, "address is null: pass the InetAddress to look for");
        for (RdsAddressPrefix p : prefixes) {
            if (p.contains(address)) {
                return true;
            }
        }
        return false;
    }

    private static boolean isMapped(byte[] a) {
        for (int i = 0; i < 10; i++) {
            if (a[i] != 0) {
                return false;
            }
        }
        return a[10] == (byte) 0xff && a[11] == (byte) 0xff;
    }

    /**
     * The prefix's length in bits.
     *
     * @return 0 to 32 for IPv4, 0 to 128 for IPv6
     */
    public int length() {
        return length;
    }

    /**
     * Whether this is an IPv4 prefix.
     *
     * @return true for IPv4, false for IPv6
     */
    public boolean isIpv4() {
        return network.length == 4;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof RdsAddressPrefix p && p.length == length && Arrays.equals(p.network, network);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(network) * 31 + length;
    }

    /** The prefix as {@code ADDRESS/LENGTH}, the address as {@link RdsAddresses#format} prints it. */
    @Override
    public String toString() {
        try {
            return RdsAddresses.format(InetAddress.getByAddress(network)) + "/" + length;
        } catch (UnknownHostException e) {
            throw new AssertionError(e);                  // 4 or 16 bytes always make an address
        }
    }
}
