package org.rds4j;

import java.net.InetAddress;
import java.util.List;
import java.util.Objects;

/**
 * One connection of a stack at one moment: everything one host keeps about one peer host over one transport (the
 * kernel's {@code rds_connection}, one line of {@code rds-info -n}), with its paths.
 *
 * @param local our address, the source the peer sees
 * @param peer the peer host's address
 * @param transport the transport's name, such as {@code tcp}
 * @param peerPaths the number of paths the peer offered (NPATHS) in its last multipath probe or pong, 0 if none
 *        was seen
 * @param peerGeneration the peer's generation number (GEN_NUM) as last seen, an unsigned 32-bit value; 0 if none
 *        was seen
 * @param paths the connection's paths, by index
 * @param overBudgetBytes payload bytes from this peer queued on our sockets beyond their budgets (half of each
 *        socket's {@code SO_RCVBUF}) and not yet read: what it sent while their ports were congested
 * @param overBudgetPeak the most {@code overBudgetBytes} has been, checked after each read of a connection
 * @param readingStopped whether some of the peer's connections are not being read, because {@code overBudgetBytes}
 *        went over {@link RdsStackConfig#peerReceiveBytes()}, or was above 0 while all peers' together were over
 *        {@link RdsStackConfig#stackReceiveBytes()}
 */
public record RdsConnectionInfo(InetAddress local, InetAddress peer, String transport, int peerPaths,
                                long peerGeneration, List<RdsPathInfo> paths, long overBudgetBytes, long overBudgetPeak,
                                boolean readingStopped) {
    /**
     * Checks and copies the parts.
     *
     * @param local our address
     * @param peer the peer's address
     * @param transport the transport's name
     * @param peerPaths the peer's NPATHS
     * @param peerGeneration the peer's GEN_NUM
     * @param paths the paths
     * @param overBudgetBytes the peer's bytes beyond its sockets' budgets
     * @param overBudgetPeak the most they have been
     * @param readingStopped whether reading is stopped
     */
    public RdsConnectionInfo {
        Objects.requireNonNull(local, "local is null: pass our address");
        Objects.requireNonNull(peer, "peer is null: pass the peer's address");
        Objects.requireNonNull(transport, "transport is null: pass the transport's name, such as tcp");
        paths = List.copyOf(Objects.requireNonNull(paths, "paths is null: pass the connection's paths"));
    }
}
