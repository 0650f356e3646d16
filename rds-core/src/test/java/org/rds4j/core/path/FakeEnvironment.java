package org.rds4j.core.path;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.rds4j.core.stack.RdsCounters;
import org.rds4j.core.cong.CongestionMap;

/**
 * A {@link ConnectionEnvironment} for path tests: virtual-time scheduler, seeded randomness whose every draw is
 * recorded, plain congestion maps, no sockets (a data message finds no receiver and is counted as dropped).
 */
final class FakeEnvironment implements ConnectionEnvironment {
    /** One call of {@link #random}: the bound asked for and the value returned. */
    record Draw(long bound, long value) {
    }

    static final long MIN_NANOS = 1_000_000L;            // 1 ms, the stack's default
    static final long MAX_NANOS = 1_000_000_000L;        // 1 s

    final RdsCounters counters = new RdsCounters();
    final VirtualScheduler scheduler = new VirtualScheduler();
    final List<Draw> draws = new ArrayList<>();
    private final Map<InetAddress, CongestionMap> localMaps = new HashMap<>();
    private final SplittableRandom random;
    boolean closing;

    FakeEnvironment(long seed) {
        this.random = new SplittableRandom(seed);
    }

    @Override
    public RdsCounters statistics() {
        return counters;
    }

    @Override
    public VirtualScheduler scheduler() {
        return scheduler;
    }

    @Override
    public CongestionMap localMap(InetAddress local) {
        return localMaps.computeIfAbsent(local, a -> new CongestionMap());
    }

    @Override
    public MessageReceiver receiver(InetAddress local, int port) {
        return null;
    }

    @Override
    public long random(long bound) {
        long v = random.nextLong(bound);
        draws.add(new Draw(bound, v));
        return v;
    }

    @Override
    public long reconnectMinNanos() {
        return MIN_NANOS;
    }

    @Override
    public long reconnectMaxNanos() {
        return MAX_NANOS;
    }

    @Override
    public long maxPayload() {
        return 1 << 20;
    }

    @Override
    public long peerReceiveBytes() {
        return 64L << 20;
    }

    private final StackReceiveBudget stackBudget = new StackReceiveBudget(256L << 20);

    @Override
    public StackReceiveBudget stackReceiveBudget() {
        return stackBudget;
    }

    @Override
    public long frameTimeoutNanos() {
        return 30_000_000_000L;
    }

    /** The four ports the stack would reserve for acknowledgement pings. */
    static final int[] ACK_PORTS = {2001, 2002, 2003, 2004};
    static final long GENERATION = 0x5EED_0001L;

    /** Ports handed out so far: the first four, then more as a path asks (after quarantines). */
    private int[] ackPorts = ACK_PORTS.clone();

    @Override
    public int[] ackPorts(InetAddress local, int atLeast) {
        while (ackPorts.length < atLeast) {
            int[] grown = java.util.Arrays.copyOf(ackPorts, ackPorts.length + 1);
            grown[ackPorts.length] = 2001 + ackPorts.length;
            ackPorts = grown;
        }
        return ackPorts.clone();
    }

    /** Ports a test took away, as an application's bind takes an acknowledgement port over. */
    final java.util.Set<Integer> takenAckPorts = new java.util.HashSet<>();

    @Override
    public boolean isAckPort(InetAddress local, int port) {
        return !takenAckPorts.contains(port);
    }

    /** Time is the scheduler's virtual time, so maintenance timers and the ack fallback follow the test. */
    @Override
    public long nanoTime() {
        return scheduler.now();
    }

    @Override
    public void peerCongestionUpdated(InetAddress peer) {
        // no sockets here
    }

    @Override
    public long generation() {
        return GENERATION;
    }

    /** The paths the stack offers: 1 for the model tests, which drive path 0 alone. */
    int paths = 1;

    @Override
    public int paths() {
        return paths;
    }

    /** No liveness checks: they read the wall clock, which virtual time does not move. */
    @Override
    public long livenessNanos() {
        return 0;
    }

    @Override
    public boolean isClosing() {
        return closing;
    }

    /** Peer-state changes reported, oldest first. */
    final java.util.List<org.rds4j.RdsPeerState> peerStates = new java.util.concurrent.CopyOnWriteArrayList<>();

    /**
     * Off unless a test sets it: the path models drive resets at will, many before the peer says anything, to test
     * acknowledgements and placement; refusals have tests of their own (PeerHealthTest, and over TCP).
     */
    int peerFailureThreshold = Integer.MAX_VALUE;

    @Override
    public int peerFailureThreshold() {
        return peerFailureThreshold;
    }

    @Override
    public long unreachableTimeoutNanos() {
        return 0;
    }

    @Override
    public void peerStateChanged(Connection connection, org.rds4j.RdsPeerState state,
                                 org.rds4j.RdsPeerState previous, String reason) {
        peerStates.add(state);
    }
}
