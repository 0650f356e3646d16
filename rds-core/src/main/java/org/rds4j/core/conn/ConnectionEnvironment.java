package org.rds4j.core.conn;

import java.net.InetAddress;
import java.util.concurrent.ScheduledExecutorService;
import org.rds4j.core.RdsCounters;
import org.rds4j.core.cong.CongestionMap;

/** What connections need from their stack: sockets to deliver to, maps, counters, timers. */
public interface ConnectionEnvironment {

    RdsCounters statistics();

    /** The stack's timer thread, for reconnect delays. */
    ScheduledExecutorService scheduler();

    /** The congestion map of a local address (ours, sent to peers). */
    CongestionMap localMap(InetAddress local);

    /**
     * The socket bound at {@code local:port}, or {@code null}. Allocation-free, so the receive path may ask per
     * message (it also caches the answer while the socket stays open).
     */
    MessageReceiver receiver(InetAddress local, int port);

    /** A uniformly random value in {@code [0, bound)}, for backoff jitter. */
    long random(long bound);

    long reconnectMinNanos();

    long reconnectMaxNanos();

    /** The largest payload accepted from a peer (1 MiB: what any RDS sender may send). */
    long maxPayload();

    /**
     * The ports of {@code local} the stack keeps for its acknowledgement pings (no socket can bind them), so that a
     * pong's destination port says which ping it answers; at least {@code atLeast} of them, reserving more if needed
     * (shared by every path from {@code local}).
     */
    int[] ackPorts(InetAddress local, int atLeast);

    /** The time, as {@link System#nanoTime()}; tests drive it. */
    long nanoTime();

    /** This stack's generation number (GEN_NUM): random, non-zero, new for every stack. */
    long generation();

    /** The liveness interval in nanoseconds, 0 for none. */
    long livenessNanos();

    /** A peer's congestion map arrived: wake congestion monitors (RDS_CONG_MONITOR). */
    void peerCongestionUpdated(InetAddress peer);

    /** Whether the stack is closing: no more reconnects. */
    boolean isClosing();
}
