package org.rds4j.core.path;

import org.rds4j.core.stack.RdsCounters.Counter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The multipath agreement of one connection, the kernel's mprds: how many paths (lanes) the two hosts use, which lane
 * a socket sends on, whether the peer encodes path indexes in its source ports, and the catch-up that keeps each
 * socket's messages in order when the lanes open.
 *
 * <p>Both ends offer a number of paths in the multipath probe and its pong (NPATHS); each uses the smaller offer. Until
 * the peer's offer is known every socket sends on path 0, as kernels from 7.0 on do (6.1 made some senders wait
 * instead). When the lanes open, a socket may move from path 0 to another lane, and its new messages could overtake
 * its old ones still on path 0: so the other paths hold their transmits until path 0 has had acknowledged everything
 * it had numbered at that moment (the kernel's {@code mprds_catchup_tx0} rule).
 *
 * <p>Threads: the agreement is written by the connection's I/O thread as it reads a probe or pong, and read by
 * senders without a lock (volatile). The catch-up is advanced by path 0, on the same thread; other paths only read
 * it.
 */
final class Multipath {
    private static final Logger log = LoggerFactory.getLogger(Multipath.class);
    /** No catch-up in progress. */
    private static final long NONE = -1;
    /** The lanes opened and path 0 has not yet noted how far it must get. */
    private static final long PENDING = -2;

    private final Connection connection;
    private final int offered;
    private volatile int peerOffer;
    private volatile boolean peerEncodesPaths;
    private volatile int lanes = 1;
    /**
     * Whether the peer has confirmed its offer on the current connection of path 0. After path 0 drops, the extra
     * paths wait for a probe or pong on the new one before they connect again: the peer may have restarted, and a
     * new incarnation would place connections arriving before its first probe on the wrong paths.
     */
    private volatile boolean confirmed = true;
    /** Path 0's last sequence number when the lanes opened, {@link #PENDING}, or {@link #NONE}. */
    private volatile long catchUpSeq = NONE;

    Multipath(Connection connection, int offered) {
        this.connection = connection;
        this.offered = offered;
    }

    /** The peer's last offer, 0 before its first probe or pong. */
    int peerOffer() {
        return peerOffer;
    }

    /** Whether the peer said (SPORT_IDX) that its source ports encode its path indexes. */
    boolean peerEncodesPaths() {
        return peerEncodesPaths;
    }

    /** The paths in use: the smaller offer, rounded down to a power of two; 1 until the peer's offer is known. */
    int lanes() {
        return lanes;
    }

    /**
     * The lane of a socket bound to {@code port}: the kernel's hash of the bound port ({@code RDS_MPATH_HASH}, Bob
     * Jenkins' one-word hash with a zero seed) masked to the number of lanes. Any stable choice keeps one socket's
     * messages on one path; this one spreads ports as a kernel host does.
     */
    int laneFor(int port) {
        return Connection.laneOf(port, lanes);
    }

    /**
     * A multipath probe or its pong arrived with the peer's offer ({@code npaths}, 0 if it carried none, which means
     * one path) and whether it carried SPORT_IDX. {@code confirms}: whether it proves that the peer knows our offer
     * too, so that connections for the extra paths will find their places there. The pong to our probe does (the
     * peer read our probe before answering it); the peer's own probe does not (it may have left before ours
     * arrived), except on the accepting side, which opens no path. Returns true if the extra paths may connect now.
     */
    boolean peerOffered(long npaths, boolean encodesPaths, boolean confirms) {
        int peer = npaths <= 0 ? 1 : (int) Math.min(npaths, 8);
        peerOffer = peer;
        peerEncodesPaths = encodesPaths;
        int agreed = Integer.highestOneBit(Math.min(peer, offered));
        int before = lanes;
        boolean wasConfirmed = confirmed;
        if (agreed != before) {
            if (before == 1) {
                catchUpSeq = PENDING;                 // before the new lane count is visible to senders
            }
            confirmed = confirms;                     // before the lanes: no extra path connects unconfirmed
            lanes = agreed;
            log.debug("{}: {} paths (peer offers {}, we offer {}{})", connection, agreed, peer, offered,
                    encodesPaths ? ", peer encodes paths in its ports" : "");
            return confirms && agreed > 1;
        }
        if (confirms) {
            confirmed = true;
        }
        return confirms && !wasConfirmed && agreed > 1;   // the extra paths may connect again
    }

    /** Path 0 lost its connection: the extra paths wait for the peer's next probe or pong before connecting. */
    void path0Down() {
        confirmed = false;
    }

    /** Whether paths other than 0 may connect: the peer's offer was confirmed on path 0's current connection. */
    boolean confirmed() {
        return confirmed;
    }

    /** The peer never confirmed on path 0's new connection (it answers no probe): go ahead without it. */
    boolean confirmAnyway() {
        boolean was = confirmed;
        confirmed = true;
        return !was && lanes > 1;
    }

    /** Whether paths other than 0 must hold their transmits. */
    boolean catchingUp() {
        return catchUpSeq != NONE;
    }

    /**
     * Path 0's progress, on the owner: notes how far it must get when the lanes have just opened, and ends
     * the catch-up once it has everything up to there acknowledged. Returns true when the catch-up ended.
     *
     * @param queue path 0's queue
     */
    boolean path0Progress(SendQueue queue) {
        long target = catchUpSeq;
        if (target == NONE) {
            return false;
        }
        if (target == PENDING) {
            queue.takeInbox();                        // messages pushed before the lanes opened count too
            target = queue.nextSeq() - 1;
            catchUpSeq = target;
        }
        if (Long.compareUnsigned(queue.oldestSeq(), target) <= 0) {
            connection.env().statistics().increment(Counter.MPRDS_CATCHUP_TX0_RETRIES);
            return false;
        }
        catchUpSeq = NONE;
        return true;
    }

    /**
     * After a sender that chose path 0 while there was one lane has pushed its message: whether the lanes have opened
     * since and the socket's lane is another one. The push may then have come after path 0 took its catch-up target,
     * and the socket's next messages, on the new lane, could overtake it (a reorder a contract test saw in CI). If the
     * lanes still read 1 here, the push came before they opened, so before path 0 took its target: it counts.
     *
     * @param port the sending socket's RDS port
     * @return true if the catch-up must start again ({@link #restartCatchUp})
     */
    boolean cameLate(int port) {
        int now = lanes;
        return now > 1 && Connection.laneOf(port, now) != 0;
    }

    /**
     * On the owner, for a message that {@linkplain #cameLate came late}: the catch-up starts again with a
     * target that counts it (or at path 0's next pass if path 0 is not up). The caller then kicks path 0, which ends
     * the catch-up at once if everything is acknowledged by then.
     *
     * @param queue path 0's queue
     * @param up whether path 0 is up (only then are its inbox's messages numbered)
     */
    void restartCatchUp(SendQueue queue, boolean up) {
        if (up) {
            queue.takeInbox();
            catchUpSeq = queue.nextSeq() - 1;
        } else {
            catchUpSeq = PENDING;
        }
    }

    /** The peer restarted: its sequence numbers start again, so a catch-up target means nothing any more. */
    void peerRestarted() {
        catchUpSeq = NONE;
    }

    /** Bob Jenkins' lookup3 hash of one 32-bit word with seed 0, as the kernel's {@code jhash_1word}. */
    static int jhash1Word(int word) {
        int a = 0xdeadbeef + 4;
        int b = a;
        int c = a;
        a += word;
        c ^= b;
        c -= Integer.rotateLeft(b, 14);
        a ^= c;
        a -= Integer.rotateLeft(c, 11);
        b ^= a;
        b -= Integer.rotateLeft(a, 25);
        c ^= b;
        c -= Integer.rotateLeft(b, 16);
        a ^= c;
        a -= Integer.rotateLeft(c, 4);
        b ^= a;
        b -= Integer.rotateLeft(a, 14);
        c ^= b;
        c -= Integer.rotateLeft(b, 24);
        return c;
    }
}
