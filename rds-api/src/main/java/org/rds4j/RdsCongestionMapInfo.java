package org.rds4j;

import java.net.InetAddress;
import java.util.List;
import java.util.Objects;

/**
 * One congestion map of a stack at one moment: the ports of one address marked congested (the kernel's
 * {@code rds_cong_map}). A stack keeps one map per local address, which it sends its peers, and one per peer address,
 * as the peer last sent it.
 *
 * @param address the address the map belongs to
 * @param local true for one of the stack's own addresses, false for a peer's
 * @param congestedPorts the ports marked congested, ascending
 */
public record RdsCongestionMapInfo(InetAddress address, boolean local, List<Integer> congestedPorts) {
    /**
     * Checks and copies the parts.
     *
     * @param address the map's address
     * @param local whether it is ours
     * @param congestedPorts the marked ports
     */
    public RdsCongestionMapInfo {
        Objects.requireNonNull(address, "address is null: pass the map's address");
        congestedPorts = List.copyOf(Objects.requireNonNull(congestedPorts, "congestedPorts is null: pass the marked"
                + " ports (List.of() for none)"));
    }
}
