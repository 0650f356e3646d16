package org.rds4j;

import java.time.Instant;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * What a stack holds at one moment, as the kernel's {@code rds-info} shows it for Linux RDS: its connections and
 * their paths ({@code rds-info -n}, {@code -s}, {@code -t}, {@code -T}), its sockets ({@code -k}, {@code -r}), the
 * congestion maps it keeps, and its counters ({@code -c}). Made by {@link RdsStack#info()}; immutable.
 *
 * <p>Each part is read where it is kept, one after the other, not all in one instant: a path's numbers agree with
 * each other, but a counter may already count a message that a path's figures do not show yet.
 *
 * @param name the stack's name ({@link RdsStackConfig#name()})
 * @param generation the stack's generation number (the GEN_NUM it sends peers), an unsigned 32-bit value
 * @param takenAt when the snapshot was started
 * @param connections the connections to peers, in no particular order
 * @param sockets the open sockets, in no particular order
 * @param congestionMaps the congestion maps the stack keeps, its own addresses' and its peers'
 * @param counters the counters by kernel name, in the kernel's order ({@link RdsStack#counters()})
 * @param memory the direct memory the stack's buffers take, against its bound
 */
public record RdsStackInfo(String name, long generation, Instant takenAt, List<RdsConnectionInfo> connections,
                           List<RdsSocketInfo> sockets, List<RdsCongestionMapInfo> congestionMaps,
                           Map<String, Long> counters, RdsMemoryInfo memory) {
    /**
     * Checks and copies the parts, so that the snapshot never changes.
     *
     * @param name the stack's name
     * @param generation the stack's generation number
     * @param takenAt when the snapshot was started
     * @param connections the connections
     * @param sockets the sockets
     * @param congestionMaps the congestion maps
     * @param counters the counters, in the order to keep
     * @param memory the direct memory figures
     */
    public RdsStackInfo {
        Objects.requireNonNull(name, "name is null: pass the stack's name");
        Objects.requireNonNull(takenAt, "takenAt is null: pass when the snapshot was started");
        Objects.requireNonNull(memory, "memory is null: pass the direct memory figures");
        connections = List.copyOf(Objects.requireNonNull(connections, "connections is null: pass the connections"
                + " (List.of() for none)"));
        sockets = List.copyOf(Objects.requireNonNull(sockets, "sockets is null: pass the sockets (List.of() for"
                + " none)"));
        congestionMaps = List.copyOf(Objects.requireNonNull(congestionMaps, "congestionMaps is null: pass the"
                + " congestion maps (List.of() for none)"));
        counters = Collections.unmodifiableMap(new LinkedHashMap<>(Objects.requireNonNull(counters, "counters is"
                + " null: pass the counters (Map.of() for none)")));
    }
}
