package org.rds4j.transport.tcp;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.ThreadLocalRandom;
import org.rds4j.core.spi.TransportInstance;

/**
 * Local ports that encode a path index, as a Linux 7.x kernel picks them for multipath RDS/TCP (SPORT_IDX): within
 * the system's ephemeral range, ports are taken in groups of {@link TransportInstance#PATH_PORT_MODULUS}, the first
 * group starting at the range's low end rounded up to a multiple of 8, and path {@code i} of a group uses the group's
 * port {@code i}. When one is in use the next group is tried, so the acceptor always reads the path from
 * {@code port % 8}.
 */
final class PathSourcePorts {
    /** Linux's default ephemeral range, used where {@code /proc} does not say. */
    static final int DEFAULT_LOW = 32768;
    static final int DEFAULT_HIGH = 60999;
    /** Groups tried before a connect gives up with the last bind error. */
    static final int MAX_ATTEMPTS = 64;

    private final int base;
    private final int groups;

    PathSourcePorts(int low, int high) {
        int m = TransportInstance.PATH_PORT_MODULUS;
        this.base = (low + m - 1) / m * m;
        this.groups = Math.max(1, (high - base + 1) / m);
    }

    /** The system's ephemeral range from {@code /proc/sys/net/ipv4/ip_local_port_range}, else Linux's default. */
    static PathSourcePorts system() {
        try {
            String[] f = Files.readString(Path.of("/proc/sys/net/ipv4/ip_local_port_range")).trim().split("\\s+");
            int low = Integer.parseInt(f[0]);
            int high = Integer.parseInt(f[1]);
            if (low > 0 && high >= low + TransportInstance.PATH_PORT_MODULUS && high <= 65535) {
                return new PathSourcePorts(low, high);
            }
        } catch (IOException | RuntimeException e) {
            // not Linux, or an unreadable /proc: the default range
        }
        return new PathSourcePorts(DEFAULT_LOW, DEFAULT_HIGH);
    }

    /** A group to start from: random, so that stacks on one host do not all race for the same ports. */
    int firstGroup() {
        return ThreadLocalRandom.current().nextInt(groups);
    }

    /** The port of path {@code pathIndex} in the {@code attempt}-th group after {@code firstGroup}. */
    int port(int firstGroup, int attempt, int pathIndex) {
        int group = (firstGroup + attempt) % groups;
        return base + group * TransportInstance.PATH_PORT_MODULUS + pathIndex;
    }

    /** How many groups a connect tries before it fails. */
    int attempts() {
        return Math.min(MAX_ATTEMPTS, groups);
    }
}
