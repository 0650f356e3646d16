package org.rds4j.core.path;

import java.net.InetAddress;
import java.util.Arrays;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A path's acknowledgement machinery, both ways (docs/reliability.md).
 *
 * <p>Owed by us: an rds4j peer keeps what it sent until our h_ack covers it, so after receiving a message we owe an
 * acknowledgement; every frame we write carries h_ack, and when nothing else goes the path sends the one reusable
 * ack-only message: at once if the peer asked with ACK_REQUIRED, else after {@link #ACK_ONLY_DELAY_NANOS} unless a
 * reply carried the acknowledgement first (on a transport that can delay a pass), as TCP delays its ACKs.
 *
 * <p>Owed to us: an rds4j peer acknowledges in h_ack; a peer that never acknowledges (a kernel over TCP) is asked
 * with pings from one of a few ports the stack reserves, and the pong, which the peer queues behind everything it
 * received before the ping, proves receipt of every message sent before that ping.
 *
 * <p>Each reserved port is a slot holding at most one outstanding ping. A reset starts a new epoch: pings still
 * outstanding may be answered late or never, so their ports are quarantined until a pong for a ping of a later
 * epoch shows that no older pong can follow (the peer answers in order). A ping unanswered for a while expires the
 * same way, so a lost pong costs a second ping, never a stall; a peer that answers no ping at all is noticed.
 *
 * <p>Not thread-safe: the path's owner uses it (docs/threading.md).
 */
final class Acknowledgements {
    private static final Logger log = LoggerFactory.getLogger(Acknowledgements.class);

    /** Outstanding acknowledgement pings per path at most; more ports are reserved only for quarantine. */
    static final int MAX_OUTSTANDING = 4;
    /** A path that somehow quarantines this many ports stops asking (it logs why). */
    static final int MAX_PORTS = 64;

    /** What {@link #pongArrived} found. */
    static final long NOT_OURS = -1;
    static final long LATE = 0;

    private final ConnectionEnvironment env;
    private final InetAddress local;
    private final Object describe;
    private int[] ports;
    /** The sequence number of the outstanding ping sent from {@code ports[i]}, or 0. */
    private long[] pingSeq;
    /** The connection epoch that ping was sent in. */
    private long[] pingEpoch;
    /** When that ping was written; until then it cannot be answered, so it does not expire. */
    private long[] pingSentNanos;
    /** Whether that ping was written (a reset or a failure drops unwritten pings from the queue). */
    private boolean[] pingWritten;
    /** Non-zero: the port had a ping outstanding when the epoch with this number began (see the class comment). */
    private long[] quarantinedSince;
    /** Counts connections: a reset starts a new epoch. */
    private long epoch;
    /** The epoch the current connection began in: pings of earlier connections have an older {@code pingEpoch}. */
    private long connectionEpoch;
    private int nextSlot;
    /**
     * Whether running out of ports was logged at WARN since a pong last freed one: a kernel that kills a lane's
     * connections as they come (docs/interop.md) made this warning on every reset, dozens of times a minute.
     */
    private boolean exhaustionLogged;

    /**
     * How long an acknowledgement nobody asked for waits before the ack-only message goes. A read that brings a
     * request is soon followed by the reply (2 to 10 us on the project's 2-core machine): written first, the reply
     * carries h_ack if it goes on this path, and either way it leaves without an ack-only frame ahead of it on the
     * I/O thread and at the peer. Short against what it holds up at the peer: a sender keeps at most half its budget
     * unacknowledged before it asks with ACK_REQUIRED, which is answered at once
     * (docs/decisions/0026-ack-only-waits-for-a-reply.md).
     */
    static final long ACK_ONLY_DELAY_NANOS = 50_000;

    /**
     * Under busy-poll's caller I/O, how many times the wait may double, to {@code ACK_ONLY_DELAY_NANOS << 5} (1.6 ms),
     * while the replies leave on other lanes (lanes follow the sending port, so with eight of them a request and its
     * reply usually take different paths, and no reply ever carries this path's h_ack). The peer's busy-polling reader
     * polls the lane its replies come on, so each ack-only message on this one wakes the peer's I/O thread, which
     * then yields for its 250 us beside the two polling threads, which on two cores slows both
     * (docs/decisions/0032-ack-only-waits-longer-when-replies-take-other-lanes.md). Waiting longer costs an
     * application thread that polls nothing. Without busy-poll the event loop keeps the deadline by staying awake,
     * so the wait stays 50 us there: with readers that poll only while they wait for a reply (tcp.callerIo), doubling
     * it held back a 1 MiB stream's acknowledgements and cost it about 12 % of its rate (decision 0033).
     */
    static final int CROSS_LANE_DOUBLINGS = 5;

    /** A message the peer keeps for resending arrived since our last transmission (which carried our h_ack). */
    private boolean owed;
    /** The peer asked for an acknowledgement now (ACK_REQUIRED). */
    private boolean requested;
    private boolean ackOnlyQueued;
    /** Non-zero while an ack-only message waits: when it goes, if no frame carried the acknowledgement first. */
    private long ackOnlyDueNanos;
    /** {@link Connection#dataPasses} when the wait began. */
    private long dataPassesAtWait;
    /** How many times the current wait doubled: waits missed in a row while traffic went back on other lanes. */
    private int doublings;
    /** {@link #CROSS_LANE_DOUBLINGS} under busy-poll's caller I/O, else 0. */
    private final int maxDoublings;
    /**
     * Waits in a row during which nothing went back to the peer on any path of the connection. From
     * {@link #MISSED_FOR_ONE_WAY} on the traffic is one-way, and waiting would only keep more of the peer's messages
     * in flight (more than the caches hold at 64 bytes: docs/decisions/0016-acknowledgement-requests.md): the
     * ack-only message goes at once, and only every {@link #WAIT_PROBE}-th one waits, to notice traffic coming back.
     */
    private int missedWaits;
    private int sinceWait;
    /** Waits missed in a row after which the ack-only message goes at once. */
    static final int MISSED_FOR_ONE_WAY = 4;
    /** While the traffic is one-way, one ack-only message in this many waits all the same. */
    static final int WAIT_PROBE = 64;
    /** The one ack-only message, reused: at most one is queued at a time, and it is never kept once written. */
    private final OutgoingMessage ackOnly = OutgoingMessage.ackOnly();
    /** When the peer last showed progress (a release), or we last asked it: the fallback ping waits from here. */
    private long lastProgressNanos;
    /** When we began asking with pings that no pong has answered since, 0 if none is waiting. */
    private long askingSinceNanos;

    Acknowledgements(ConnectionEnvironment env, InetAddress local, Object describe, boolean readersPoll) {
        this.env = env;
        this.maxDoublings = readersPoll ? CROSS_LANE_DOUBLINGS : 0;
        this.local = local;
        this.describe = describe;
    }

    // ---------------------------------------------------------------------------------------- owed by us

    /** A message arrived: an rds4j peer keeps it (unless ack-only) until we acknowledge; ACK_REQUIRED asks now. */
    void received(boolean ackOnlyMessage, boolean ackRequired) {
        if (!ackOnlyMessage) {
            owed = true;
        }
        if (ackRequired) {
            requested = true;
        }
    }

    /** A frame went out carrying our h_ack, which covers everything received so far. */
    void wrote(OutgoingMessage m) {
        owed = false;
        if (m.ackPing) {
            pingWritten(m.sequence);
        }
        if (m == ackOnly) {
            ackOnlyQueued = false;
            env.statistics().increment(org.rds4j.core.stack.RdsCounters.Counter.ACK_SENT);
        }
    }

    /**
     * After a read: the ack-only message to queue now if the peer waits for an acknowledgement and nothing else goes
     * (nothing queued), or {@code null}. One the peer did not ask for waits instead ({@link #waiting}) unless the
     * traffic is one-way; a wait that starts ({@link #waiting} turns true) has the caller ask the transport to come
     * back when it is due, or queue it now ({@link #ackOnlyNow}) if the transport cannot.
     *
     * @param peerAcks whether the peer acknowledges (an rds4j peer), so that it keeps what it sent until we do
     * @param somethingQueued whether a frame is queued, which will carry the acknowledgement
     * @param nowNanos the time now
     * @param dataPasses the connection's count of passes that wrote a socket's message
     */
    OutgoingMessage ackOnlyIfWanted(boolean peerAcks, boolean somethingQueued, long nowNanos, long dataPasses) {
        boolean wanted = requested || (owed && peerAcks);
        if (!wanted || ackOnlyQueued || somethingQueued) {
            return null;
        }
        if (requested) {
            return ackOnlyNow();
        }
        if (ackOnlyDueNanos != 0) {
            return null;                               // already waiting: the deadline stays
        }
        if (missedWaits >= MISSED_FOR_ONE_WAY && ++sinceWait < WAIT_PROBE) {
            return ackOnlyNow();
        }
        sinceWait = 0;
        ackOnlyDueNanos = nowNanos + delayNanos();
        dataPassesAtWait = dataPasses;
        return null;
    }

    /** How long an acknowledgement nobody asked for waits now: 50 us, longer while replies take other lanes. */
    long delayNanos() {
        return ACK_ONLY_DELAY_NANOS << doublings;
    }

    /** Whether an ack-only message waits. */
    boolean waiting() {
        return ackOnlyDueNanos != 0;
    }

    /** How long the waiting ack-only message has left; at least 1. */
    long dueInNanos(long nowNanos) {
        return Math.max(1, ackOnlyDueNanos - nowNanos);
    }

    /**
     * At a pass, while an ack-only message waits: gives it up if a frame queued will carry the acknowledgement (or
     * none is owed any more), returns it to queue once it is due, else {@code null} (the pass came early).
     *
     * @param somethingQueued whether a frame is queued on this path (the inbox counts)
     * @param nowNanos the time now
     * @param dataPasses the connection's count of passes that wrote a socket's message
     */
    OutgoingMessage ackOnlyIfDue(boolean somethingQueued, long nowNanos, long dataPasses) {
        if (ackOnlyQueued) {
            ackOnlyDueNanos = 0;                       // asked for meanwhile: on its way
            return null;
        }
        if (!owed || somethingQueued) {
            ackOnlyDueNanos = 0;                       // carried by a frame that went, or goes, on this path
            missedWaits = 0;
            doublings = 0;
            return null;
        }
        if (nowNanos - ackOnlyDueNanos < 0) {
            return null;
        }
        if (dataPasses != dataPassesAtWait) {
            missedWaits = 0;                           // traffic went back, on another lane: waiting pays
            if (doublings < maxDoublings) {
                doublings++;                           // ... and the next wait, longer, spares the peer a frame
            }
        } else {
            doublings = 0;
            if (missedWaits < MISSED_FOR_ONE_WAY) {
                missedWaits++;
            }
        }
        return ackOnlyNow();
    }

    /** The ack-only message to queue now, whatever waited. */
    OutgoingMessage ackOnlyNow() {
        requested = false;
        ackOnlyDueNanos = 0;
        ackOnlyQueued = true;
        ackOnly.retransmit = false;
        return ackOnly;
    }

    /**
     * The path dropped everything it held, the ack-only message with it: it may be queued again. Pings not yet
     * written went too: their slots are free (written ones may still be answered: they stay until they expire).
     */
    void queueCleared() {
        ackOnlyQueued = false;
        ackOnlyDueNanos = 0;
        for (int i = 0; pingSeq != null && i < pingSeq.length; i++) {
            if (pingSeq[i] != 0 && !pingWritten[i]) {
                pingSeq[i] = 0;
            }
        }
    }

    private void pingWritten(long seq) {
        for (int i = 0; pingSeq != null && i < pingSeq.length; i++) {
            if (pingSeq[i] == seq && !pingWritten[i]) {
                pingWritten[i] = true;
                pingSentNanos[i] = env.nanoTime();
                return;
            }
        }
    }

    // ---------------------------------------------------------------------------------------- owed to us

    /** Something was released, or we asked: the fallback waits from now. */
    void progress(long nowNanos) {
        lastProgressNanos = nowNanos;
    }

    /** Whether sent messages have waited for an acknowledgement longer than {@code fallbackNanos}. */
    boolean overdue(long nowNanos, long fallbackNanos) {
        return nowNanos - lastProgressNanos >= fallbackNanos;
    }

    /**
     * A slot for a new ping, unless one outstanding already covers {@code newestSent} (0: nothing sent) or
     * {@code force} (liveness) says to ping anyway. Returns -1 if no ping should go.
     */
    int slotForPing(long newestSent, boolean force) {
        long newest = 0;
        int outstanding = 0;
        int free = -1;
        int n = ports == null ? 0 : ports.length;
        for (int i = 0; i < n; i++) {
            int slot = (nextSlot + i) % n;
            if (pingSeq[slot] != 0) {
                outstanding++;
                if (Long.compareUnsigned(pingSeq[slot], newest) > 0) {
                    newest = pingSeq[slot];
                }
            } else if (quarantinedSince[slot] == 0 && free < 0 && env.isAckPort(local, ports[slot])) {
                free = slot;                          // (an application may have taken the port over)
            }
        }
        boolean covered = newestSent == 0 || (newest != 0 && Long.compareUnsigned(newest, newestSent) >= 0);
        if (outstanding >= MAX_OUTSTANDING || (!force && covered)) {
            return -1;
        }
        return free >= 0 ? free : grow();
    }

    int port(int slot) {
        return ports[slot];
    }

    /** The ping from {@code slot} was queued with sequence number {@code seq}. */
    void pingQueued(int slot, long seq) {
        long now = env.nanoTime();
        pingSeq[slot] = seq;
        pingEpoch[slot] = epoch;
        pingSentNanos[slot] = now;
        pingWritten[slot] = false;
        nextSlot = (slot + 1) % ports.length;
        if (askingSinceNanos == 0) {
            askingSinceNanos = now;
        }
    }

    /**
     * Gives up on pings outstanding for {@code expiryNanos} or longer: their slots are quarantined as after a reset
     * (an answer may still come, late), so a lost pong never blocks asking again, and four unanswered pings never
     * block even liveness pings. Returns how many expired.
     */
    int expire(long nowNanos, long expiryNanos) {
        if (pingSeq == null) {
            return 0;
        }
        int expired = 0;
        for (int i = 0; i < pingSeq.length; i++) {
            if (pingSeq[i] != 0 && pingWritten[i] && nowNanos - pingSentNanos[i] >= expiryNanos) {
                if (expired++ == 0) {
                    epoch++;                          // pings from now on are younger than the expired ones
                }
                pingSeq[i] = 0;
                quarantinedSince[i] = epoch;
            }
        }
        return expired;
    }

    /**
     * Whether the peer has answered none of our pings for {@code limitNanos}: asked all that time, not one pong, not
     * even a late one. A peer that answers no ping at all (a kernel with {@code net.rds.ping_enable=0}) can never
     * confirm a message.
     */
    boolean unanswered(long nowNanos, long limitNanos) {
        return askingSinceNanos != 0 && nowNanos - askingSinceNanos >= limitNanos;
    }

    /**
     * A port for asking a peer that answers no ping whether it answers again: one already quarantined, or -1 if none
     * is. Its answer proves nothing (it is LATE, as any answer to that port), but shows the peer answers; asking from
     * fresh ports instead would quarantine a new one every 2 s of silence until none was left, and a path with no
     * port left never asks again, even once the peer answers.
     */
    int slotForRetry() {
        for (int i = 0; quarantinedSince != null && i < quarantinedSince.length; i++) {
            if (quarantinedSince[i] != 0 && pingSeq[i] == 0) {
                return i;
            }
        }
        return -1;
    }

    /**
     * A retry ping went from quarantined {@code slot}: only a pong to a ping sent after it may lift the quarantine.
     * Its epoch is the slot's ping epoch too, so a peer restart learnt on this connection does not lift it either
     * ({@link #peerRestarted}): the retry may have reached the new peer, which will answer it. Lifted there, the port
     * pinged again at once and the retry's late pong was taken for the new ping's answer, releasing messages the peer
     * had not read (AcknowledgementModelTest, seed -6016719646845216517).
     */
    void retryQueued(int slot) {
        epoch++;
        quarantinedSince[slot] = epoch;
        pingEpoch[slot] = epoch;
        if (askingSinceNanos == 0) {
            askingSinceNanos = env.nanoTime();
        }
    }

    /** We stopped waiting (the messages were failed): the next ping starts a new wait. */
    void stopAsking() {
        askingSinceNanos = 0;
    }

    /**
     * A pong arrived for {@code port}.
     *
     * @return the sequence number of the ping it answers (release everything up to it), {@link #LATE} for a late
     *         answer to a ping from before a reset (nothing proven), or {@link #NOT_OURS} if the port is not one
     *         of ours
     */
    long pongArrived(int port) {
        if (ports == null) {
            return NOT_OURS;
        }
        long result = NOT_OURS;
        for (int i = 0; i < ports.length; i++) {
            if (ports[i] != port || pingSeq[i] == 0 && !env.isAckPort(local, port)) {
                continue;                             // not ours, or ours no longer: an application's pong
            }
            askingSinceNanos = 0;                     // any answer, even a late one, shows that the peer answers
            if (pingSeq[i] != 0) {
                result = pingSeq[i];
                pingSeq[i] = 0;
                for (int j = 0; j < ports.length; j++) {
                    if (quarantinedSince[j] != 0 && quarantinedSince[j] <= pingEpoch[i]) {
                        quarantinedSince[j] = 0;     // no older pong can follow this one
                    }
                }
                exhaustionLogged = false;
            } else if (result == NOT_OURS) {
                result = LATE;
            }
        }
        return result;
    }

    /** A reset: pings outstanding may be answered late, or never; quarantine their ports. */
    void connectionReset() {
        quarantineOutstanding();
        connectionEpoch = epoch;
    }

    /**
     * The peer restarted (a new generation): pings sent on connections before the current one went to the old peer,
     * whose answers can only come on its own connections, and those no longer count (PathNumbering), so
     * their ports leave quarantine. Without this a path whose ports were all quarantined under the old peer never
     * pinged again. Pings sent on the current connection may have reached the new peer: quarantined as on a reset.
     */
    void peerRestarted() {
        if (quarantinedSince != null) {
            for (int i = 0; i < quarantinedSince.length; i++) {
                if (quarantinedSince[i] != 0 && pingEpoch[i] < connectionEpoch) {
                    quarantinedSince[i] = 0;
                }
            }
        }
        exhaustionLogged = false;
        quarantineOutstanding();
    }

    private void quarantineOutstanding() {
        epoch++;
        askingSinceNanos = 0;                         // a new connection, or a new peer, gets the full time to answer
        if (pingSeq == null) {
            return;
        }
        for (int i = 0; i < pingSeq.length; i++) {
            if (pingSeq[i] != 0) {
                pingSeq[i] = 0;
                if (pingWritten[i]) {
                    quarantinedSince[i] = epoch;      // unwritten ones left the queue unanswerable: no quarantine
                }
            }
        }
    }

    /** Every port is busy or quarantined: take more from the stack. Returns a free slot, or -1. */
    private int grow() {
        int have = ports == null ? 0 : ports.length;
        if (have >= MAX_PORTS) {
            if (!exhaustionLogged) {
                exhaustionLogged = true;
                log.warn("{}: all {} acknowledgement ports are quarantined by resets; not pinging until a pong"
                        + " arrives", describe, have);
            } else {
                log.debug("{}: all {} acknowledgement ports are still quarantined", describe, have);
            }
            return -1;
        }
        int[] got = env.ackPorts(local, have + MAX_OUTSTANDING);
        ports = Arrays.copyOf(got, Math.min(got.length, MAX_PORTS));
        pingSeq = Arrays.copyOf(pingSeq == null ? new long[0] : pingSeq, ports.length);
        pingEpoch = Arrays.copyOf(pingEpoch == null ? new long[0] : pingEpoch, ports.length);
        pingSentNanos = Arrays.copyOf(pingSentNanos == null ? new long[0] : pingSentNanos, ports.length);
        pingWritten = Arrays.copyOf(pingWritten == null ? new boolean[0] : pingWritten, ports.length);
        quarantinedSince = Arrays.copyOf(quarantinedSince == null ? new long[0] : quarantinedSince, ports.length);
        return have < ports.length ? have : -1;
    }
}
