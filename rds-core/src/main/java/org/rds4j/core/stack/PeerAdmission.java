package org.rds4j.core.stack;

import java.net.InetAddress;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import org.rds4j.RdsAddresses;
import org.rds4j.RdsAddressPrefix;
import org.rds4j.RdsStackConfig;
import org.rds4j.core.stack.RdsCounters.Counter;
import org.rds4j.core.path.Connection;
import org.rds4j.core.spi.OffHeapMemory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Which peers a stack keeps anything for. A connection is judged before any state exists for its peer: an address
 * outside {@link RdsStackConfig#allowedPeers()}, or a new peer beyond {@link RdsStackConfig#maxPeers()}, is refused
 * (the transport resets it), counted, and logged at most once a minute. And every second the stack's timer forgets
 * peers that never became useful (no message of theirs reached a socket, no socket sent to them) once no path of
 * theirs has been up for {@link RdsStackConfig#idlePeerTimeout()}: their connection, paths, congestion map and any
 * attempt to connect back to them go, so a flood of connections that say nothing leaves nothing behind. A new peer is
 * also refused while the stack's off-heap buffers take most of their bound ({@link OffHeapMemory#roomForNewPeer}):
 * the newest peers are shed, the connections already kept keep their memory.
 *
 * <p>Threads: {@link #admits} runs on the I/O thread that accepts; {@link #reclaimIdle} on the stack's timer, which
 * alone owns {@link #idleSince}; the refusal log's state is guarded by this object's monitor.
 */
final class PeerAdmission {
    private static final Logger log = LoggerFactory.getLogger(PeerAdmission.class);
    private static final long LOG_INTERVAL_NANOS = 60_000_000_000L;

    private final CoreStack stack;
    private final ConnectionTable connections;
    private final List<RdsAddressPrefix> allowed;
    private final int maxPeers;
    private final long idleTimeoutNanos;
    private final OffHeapMemory offHeap;
    /** Timer thread only: when a useless connection was first seen with no path up. */
    private final Map<Connection, Long> idleSince = new IdentityHashMap<>();

    // Guarded by this: refusals not yet logged.
    private long lastLogNanos;
    private long refusedSinceLog;
    private boolean logged;

    PeerAdmission(CoreStack stack, ConnectionTable connections, RdsStackConfig config, OffHeapMemory offHeap) {
        this.offHeap = offHeap;
        this.stack = stack;
        this.connections = connections;
        this.allowed = config.allowedPeers();
        this.maxPeers = config.maxPeers();
        this.idleTimeoutNanos = config.idlePeerTimeout().toNanos();
    }

    /** Whether {@code peer} is among the allowed peers (all are, without an allow-list). */
    boolean allows(InetAddress peer) {
        return allowed.isEmpty() || RdsAddressPrefix.anyContains(allowed, peer);
    }

    /**
     * Whether a connection from {@code peer} may be accepted: it is allowed, and it is a known peer or there is
     * room for one more. Counts and logs a refusal.
     *
     * @param known whether the stack already keeps a connection for the peer
     */
    boolean admits(InetAddress peer, boolean known, int peers) {
        String why;
        if (!allows(peer)) {
            why = "it is not among allowedPeers " + allowed;
        } else if (!known && peers >= maxPeers) {
            why = "the stack already keeps " + peers + " peers, its maxPeers";
        } else if (!known && !offHeap.roomForNewPeer()) {
            why = "its off-heap buffers take " + (offHeap.inUse() >> 20) + " MiB of their bound of "
                    + (offHeap.bound() >> 20) + " MiB (offHeapBytes); new peers are refused until they take less"
                    + " than " + RdsStackConfig.OFF_HEAP_SHED_PERCENT + "%, peers already kept go on";
        } else {
            return true;
        }
        stack.statistics().increment(Counter.CONN_PEER_REFUSED);
        refused(peer, why);
        return false;
    }

    private synchronized void refused(InetAddress peer, String why) {
        long now = System.nanoTime();
        refusedSinceLog++;
        if (logged && now - lastLogNanos < LOG_INTERVAL_NANOS) {
            return;
        }
        log.info("refused {} connection(s) since the last such line, the last from {}: {} (conn_peer_refused"
                + " counts them; this line comes at most once a minute)", refusedSinceLog, RdsAddresses.format(peer),
                why);
        logged = true;
        lastLogNanos = now;
        refusedSinceLog = 0;
    }

    /**
     * The timer's sweep: forgets every useless peer that has had no path up for the idle timeout. A failure is
     * logged, and the next sweep comes all the same (a periodic task that throws is never run again).
     */
    void reclaimIdle() {
        try {
            sweep();
        } catch (RuntimeException e) {
            log.warn("forgetting idle peers failed", e);
        }
    }

    private void sweep() {
        long now = System.nanoTime();
        List<Connection> all = new java.util.ArrayList<>(connections.all());
        idleSince.keySet().retainAll(new java.util.HashSet<>(all));
        for (Connection c : all) {
            if (c.isUseful() || !c.noPathUp()) {
                idleSince.remove(c);
                continue;
            }
            Long since = idleSince.putIfAbsent(c, now);
            if (since != null && now - since >= idleTimeoutNanos && connections.forget(c)) {
                idleSince.remove(c);
            }
        }
    }
}
