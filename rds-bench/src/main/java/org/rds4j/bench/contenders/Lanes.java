package org.rds4j.bench.contenders;

import java.io.IOException;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;
import org.rds4j.RdsConnectionInfo;
import org.rds4j.RdsPathInfo;
import org.rds4j.RdsStack;

/**
 * Which lane (path) of a multipath connection a socket sends on, so that the benchmark can bind its sockets to ports
 * that spread over every lane, and the check, at the end of a cell, that the messages really went that way.
 *
 * <p>The lane is the kernel's choice, which rds4j follows: Bob Jenkins' one-word hash of the socket's bound port with
 * a zero seed, masked to the number of lanes (rds-core's {@code Multipath.laneFor}). The benchmark computes it itself
 * because that method is internal to rds-core; the check at the end of the cell would catch a difference.
 */
final class Lanes {
    /** The first RDS port tried for a socket of the benchmark: far from the ports a stack picks for itself. */
    static final int FIRST_PORT = 30000;
    /** Ports tried for one socket before giving up (the stack's reserved ack ports can take a few). */
    private static final int PORT_ATTEMPTS = 1000;

    private Lanes() {
    }

    /** The lane a socket bound to {@code port} sends on when {@code lanes} (a power of two) are in use. */
    static int laneOf(int port, int lanes) {
        return org.rds4j.core.path.Connection.laneOf(port, lanes);
    }

    /**
     * Ports from {@code from} upwards, in order, that fall on lane {@code lane} of {@code lanes}; the caller binds the
     * first one that is free.
     */
    static int[] candidates(int lane, int lanes, int from) {
        int[] out = new int[PORT_ATTEMPTS];
        int n = 0;
        for (int port = from; port <= 0xffff && n < out.length; port++) {
            if (laneOf(port, lanes) == lane) {
                out[n++] = port;
            }
        }
        return java.util.Arrays.copyOf(out, n);
    }

    /**
     * Checks that {@code stack}'s connection to {@code peer} carried each socket's messages on its lane: every lane
     * must have numbered at least half of what the sockets hashed to it sent (the first messages of a connection go on
     * path 0 until the peer's offer is known, so not all of them), and with several lanes agreed the traffic must not
     * all have gone over one path.
     *
     * @param paths the stack's configured paths (both stacks offer the same)
     * @param ports the ports of the stack's sending sockets
     * @param sent how many messages each of those sockets sent
     * @throws IOException naming the per-path counts, if the traffic did not spread as the ports say
     */
    static void verify(RdsStack stack, InetAddress peer, String transport, int paths, int[] ports, long[] sent)
            throws IOException {
        RdsConnectionInfo conn = null;
        for (RdsConnectionInfo c : stack.info().connections()) {
            if (c.peer().equals(peer) && c.transport().equals(transport)) {
                conn = c;
            }
        }
        if (conn == null) {
            throw new IOException(stack.config().name() + " has no " + transport + " connection to " + peer);
        }
        long[] expected = new long[paths];
        for (int i = 0; i < ports.length; i++) {
            expected[laneOf(ports[i], paths)] += sent[i];
        }
        List<RdsPathInfo> info = conn.paths();
        long[] carried = new long[paths];
        for (RdsPathInfo p : info) {
            if (p.index() < paths) {
                carried[p.index()] = p.nextTxSequence() - 1;    // sequence numbers start at 1
            }
        }
        int lanesUsed = 0;
        List<String> wrong = new ArrayList<>();
        for (int lane = 0; lane < paths; lane++) {
            if (expected[lane] > 0 && carried[lane] > 0) {
                lanesUsed++;
            }
            if (carried[lane] < expected[lane] / 2) {
                wrong.add("path " + lane + " numbered " + carried[lane] + " messages, its sockets sent "
                        + expected[lane]);
            }
        }
        int lanesWanted = (int) java.util.Arrays.stream(expected).filter(e -> e > 0).count();
        if (!wrong.isEmpty() || lanesUsed < lanesWanted) {
            throw new IOException(stack.config().name() + " to " + peer.getHostAddress() + ": the messages did not "
                    + "go over the " + lanesWanted + " lane(s) their ports hash to (peer offers " + conn.peerPaths()
                    + " paths): " + String.join("; ", wrong) + "; messages numbered per path: "
                    + java.util.Arrays.toString(carried));
        }
    }
}
