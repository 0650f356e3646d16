package org.rds4j.core.path;

import java.net.InetAddress;
import java.util.concurrent.ScheduledExecutorService;
import org.rds4j.core.stack.RdsCounters;
import org.rds4j.core.cong.CongestionMap;

/** What connections need from their stack: sockets to deliver to, maps, counters, timers. */
public interface ConnectionEnvironment {

    /**
     * The stack's counters, the kernel's {@code rds_statistics}.
     *
     * @return the counters connections add to
     */
    RdsCounters statistics();

    /**
     * The stack's timer thread, for reconnect delays.
     *
     * @return the scheduler; connections never shut it down
     */
    ScheduledExecutorService scheduler();

    /**
     * The congestion map of a local address (ours, sent to peers).
     *
     * @param local one of this stack's addresses
     * @return the map of the ports bound at {@code local}
     */
    CongestionMap localMap(InetAddress local);

    /**
     * The socket bound at {@code local:port}, or {@code null}. Allocation-free, so the receive path may ask per
     * message (it also caches the answer while the socket stays open).
     *
     * @param local the message's destination address
     * @param port the message's destination RDS port, 0 to 65535
     * @return the bound socket, or {@code null} if none is bound there
     */
    MessageReceiver receiver(InetAddress local, int port);

    /**
     * Whether the stack busy-polls ({@link org.rds4j.RdsStackConfig#busyPoll()}): its readers poll their paths for as
     * long as they wait, rather than for a reply's yielding window at most.
     *
     * @return true under busy-poll
     */
    default boolean busyPoll() {
        return false;
    }

    /**
     * A uniformly random value in {@code [0, bound)}, for backoff jitter.
     *
     * @param bound the exclusive upper bound, positive
     * @return the random value
     */
    long random(long bound);

    /**
     * The first ceiling of the random reconnect delay; it doubles after each failed attempt.
     *
     * @return the delay in nanoseconds
     */
    long reconnectMinNanos();

    /**
     * The highest ceiling of the random reconnect delay: doubling stops there.
     *
     * @return the delay in nanoseconds
     */
    long reconnectMaxNanos();

    /**
     * The largest payload accepted from a peer (1 MiB: what any RDS sender may send).
     *
     * @return the limit in bytes; a larger h_len is a protocol error
     */
    long maxPayload();

    /**
     * The most payload bytes one peer may have queued on our sockets and unread before its connections stop being
     * read ({@code RdsStackConfig.peerReceiveBytes}).
     *
     * @return the bound in bytes
     */
    long peerReceiveBytes();

    /**
     * What all peers together hold beyond our sockets' budgets ({@code RdsStackConfig.stackReceiveBytes}).
     *
     * @return the stack's one budget
     */
    StackReceiveBudget stackReceiveBudget();

    /**
     * How long a started message may take to complete before its connection is dropped
     * ({@code RdsStackConfig.frameTimeout}).
     *
     * @return the timeout in nanoseconds
     */
    long frameTimeoutNanos();

    /**
     * The ports of {@code local} the stack keeps for its acknowledgement pings (no socket can bind them), so that a
     * pong's destination port says which ping it answers; at least {@code atLeast} of them, reserving more if needed
     * (shared by every path from {@code local}).
     *
     * @param local one of this stack's addresses
     * @param atLeast how many ports the caller needs
     * @return the reserved RDS ports, at least {@code atLeast} of them (the array is shared: do not change it)
     */
    int[] ackPorts(InetAddress local, int atLeast);

    /**
     * Whether {@code port} of {@code local}, once handed out by {@link #ackPorts}, is still the stack's: an application
     * that binds it by number takes it over, and then no new ping may come from it.
     *
     * @param local our address
     * @param port an acknowledgement port
     * @return true while the stack still holds it
     */
    boolean isAckPort(InetAddress local, int port);

    /**
     * The time, as {@link System#nanoTime()}; tests drive it.
     *
     * @return the time in nanoseconds, meaningful only as a difference
     */
    long nanoTime();

    /**
     * This stack's generation number (GEN_NUM): random, non-zero, new for every stack.
     *
     * @return the generation, an unsigned 32-bit value
     */
    long generation();

    /**
     * The number of paths this stack offers each peer (NPATHS).
     *
     * @return 1, 2, 4 or 8
     */
    int paths();

    /**
     * The liveness interval in nanoseconds, 0 for none.
     *
     * @return the interval in nanoseconds
     */
    long livenessNanos();

    /**
     * A peer's congestion map arrived: wake congestion monitors (RDS_CONG_MONITOR).
     *
     * @param peer the address whose map changed
     */
    void peerCongestionUpdated(InetAddress peer);

    /**
     * How many of path 0's attempts in a row must fail the same way before the peer is reported
     * ({@code RdsStackConfig.peerFailureThreshold}).
     *
     * @return at least 1
     */
    int peerFailureThreshold();

    /**
     * How long an unreachable peer keeps its queued messages ({@code RdsStackConfig.unreachableTimeout}).
     *
     * @return nanoseconds, 0 for as long as it is away
     */
    long unreachableTimeoutNanos();

    /**
     * A peer's state changed (on the connection's owner): the stack tells its listeners and JMX on a thread of its
     * own, and returns at once.
     *
     * @param connection the peer's connection
     * @param state the new state
     * @param previous the state before, {@code null} for the first report
     * @param reason the cause in words
     */
    void peerStateChanged(Connection connection, org.rds4j.RdsPeerState state, org.rds4j.RdsPeerState previous,
                          String reason);

    /**
     * Whether the stack is closing: no more reconnects.
     *
     * @return true once the stack has begun to close
     */
    boolean isClosing();
}
