package org.rds4j.core.path;

import java.net.InetSocketAddress;
import org.rds4j.RdsConnectionInfo;
import org.rds4j.RdsPathInfo;
import org.rds4j.core.spi.TransportConnection;

/** Builds the inspection snapshots of paths and connections ({@link org.rds4j.RdsStack#info()}). */
final class PathInfos {
    private PathInfos() {
    }

    /** On the path's owner. */
    static RdsPathInfo of(int index, PathState state, SendQueue queue, long nextRxSeq, long resets,
                          PathConnection current) {
        long[] c = queue.census();
        TransportConnection tc = current == null ? null : current.transportConnection();
        InetSocketAddress local = null;
        InetSocketAddress remote = null;
        if (tc != null) {
            local = tc.localAddress();
            remote = tc.remoteAddress();
        }
        return new RdsPathInfo(index, RdsPathInfo.State.valueOf(state.name()), queue.nextSeq(), nextRxSeq,
                (int) c[0], c[1], (int) c[2], c[3], resets, local, remote);
    }

    /** A connection with each of its paths, on their owner. */
    static RdsConnectionInfo of(Connection c) {
        RdsPathInfo[] paths = new RdsPathInfo[c.pathCount()];
        for (int i = 0; i < paths.length; i++) {
            paths[i] = c.path(i).infoOwned();
        }
        PeerReceiveBudget budget = c.receiveBudget();
        return new RdsConnectionInfo(c.local(), c.peer(), c.transportName(), c.peerPaths(), c.peerGeneration(),
                java.util.List.of(paths), budget.held(), budget.peak(), budget.isPaused());
    }
}
