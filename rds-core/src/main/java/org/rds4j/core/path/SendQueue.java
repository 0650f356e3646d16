package org.rds4j.core.path;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import org.rds4j.RdsDatagram;
import org.rds4j.core.stack.RdsCounters;
import org.rds4j.core.stack.RdsCounters.Counter;

/**
 * A path's messages on their way: the inbox application threads push to, the messages numbered and not yet written
 * (the kernel's {@code c_send_queue}), and those written and kept until the peer has them ({@code c_retrans}).
 *
 * <p>Sequence numbers are given here, in the order messages reach the send queue, so the stream's order is the
 * numbers' order. A message never changes path and keeps its number for life, so a resend after a reset carries it.
 *
 * <p>Threads: {@link #push} is lock-free and may be called by any thread; everything else runs on the path's owner,
 * the connection's I/O thread, which makes the inbox single-consumer.
 */
final class SendQueue {
    private static final VarHandle CELL = MethodHandles.arrayElementVarHandle(OutgoingMessage[].class);
    /**
     * Where the inbox's top sits in {@link #inbox}: 96 bytes after the array's first cell and 92 before its end
     * (4-byte references), so no other field shares its cache line.
     */
    private static final int TOP = 24;

    private final InetAddress peer;
    private final RdsCounters counters;
    /**
     * Messages pushed by application threads, newest first (a Treiber stack, taken whole): its top is the one cell
     * {@link #TOP} of this array, which is padding around it. Senders compare-and-set the top on every send; as a
     * field it shared a cache line with {@link #nextSeq}, which the I/O thread writes for every message it numbers,
     * so each of those writes cost the next sender a cache miss (and the reverse).
     */
    private final OutgoingMessage[] inbox = new OutgoingMessage[2 * TOP];
    /*
     * The numbered messages, oldest first, linked through OutgoingMessage.next as the inbox left them: those written
     * and kept until the peer has them (the kernel's c_retrans), from head up to lastSent, then those not yet written
     * (c_send_queue), from firstUnsent to tail. One list, not two queues of references: under G1 every reference
     * stored into an old object of another region costs a fence in the write barrier, and a message moved through
     * two array queues cost two such stores (into each array) and a third as a release linked it into its socket's
     * chain. Here a message's link is written once, as the inbox is reversed, and a transmit pass or a release moves
     * the cursors once per pass or batch.
     */
    private OutgoingMessage head;
    private OutgoingMessage tail;
    /** The first message not yet written, or null when every message held was written. */
    private OutgoingMessage firstUnsent;
    /** The newest message written and held (the one just before firstUnsent), or null when none is. */
    private OutgoingMessage lastSent;
    /** Messages in the list. */
    private int count;
    private int pongsHeld;
    private long nextSeq = 1;

    SendQueue(InetAddress peer, RdsCounters counters) {
        this.peer = peer;
        this.counters = counters;
    }

    /** Any thread, no lock: one compare-and-set. The message is numbered when {@link #takeInbox} takes it in. */
    void push(OutgoingMessage m) {
        OutgoingMessage top;
        do {
            top = inboxTop();
            m.next = top;
        } while (!CELL.compareAndSet(inbox, TOP, top, m));
    }

    private OutgoingMessage inboxTop() {
        return (OutgoingMessage) CELL.getVolatile(inbox, TOP);
    }

    /** Moves the inbox onto the send queue, oldest first, numbering the messages. */
    void takeInbox() {
        OutgoingMessage m = (OutgoingMessage) CELL.getAndSet(inbox, TOP, (OutgoingMessage) null);
        if (m == null) {
            return;
        }
        OutgoingMessage last = m;                     // the newest: it ends the chain once reversed
        OutgoingMessage reversed = null;              // newest first: reversing it links it oldest first
        while (m != null) {
            OutgoingMessage next = m.next;
            m.next = reversed;
            reversed = m;
            m = next;
        }
        int n = 0;
        for (OutgoingMessage q = reversed; q != null; q = q.next) {
            int k = q.seal();                         // a run takes a number per message it carries
            q.sequence = nextSeq;
            nextSeq += k;
            n += k;
        }
        append(reversed, last, n);
        counters.add(Counter.SEND_QUEUED, n);         // once per batch: senders share no counter
    }

    /** Appends a chain, linked from {@code first} to {@code last} (whose link is null), as unsent: n messages. */
    private void append(OutgoingMessage first, OutgoingMessage last, int n) {
        if (tail == null) {
            head = first;
        } else {
            tail.next = first;
        }
        tail = last;
        if (firstUnsent == null) {
            firstUnsent = first;
        }
        count += n;
    }

    /** Appends one message as unsent. */
    private void append(OutgoingMessage m) {
        m.next = null;
        append(m, m, 1);
    }

    /**
     * Takes {@code m} out of the list; {@code prev} is the message before it, or {@code null} if it is the first.
     * Its link is cleared; the cursors that pointed at it move to its neighbours.
     */
    void unlink(OutgoingMessage prev, OutgoingMessage m) {
        OutgoingMessage next = m.next;
        if (prev == null) {
            head = next;
        } else {
            prev.next = next;
        }
        if (tail == m) {
            tail = prev;
        }
        if (firstUnsent == m) {
            firstUnsent = next;
        }
        if (lastSent == m) {
            lastSent = prev;
        }
        m.next = null;
        count -= m.entries();
    }

    /**
     * Pongs queued or written and not yet acknowledged (each is kept, like data, until the peer has it). On the
     * path's owner.
     *
     * @return how many pongs the path holds
     */
    int pongsHeld() {
        return pongsHeld;
    }

    /** A pong is about to be pushed (on the path's owner): it counts from now until it leaves the queues. */
    void pongQueued() {
        pongsHeld++;
    }

    /** {@code m} left the queues for good. */
    private void gone(OutgoingMessage m) {
        if (m.pong) {
            pongsHeld--;
        }
    }

    /** Numbers a message of the path's own (a ping, pong, probe, ack-only) and queues it after the inbox. */
    void add(OutgoingMessage m) {
        takeInbox();                                  // keep the numbering in push order
        m.sequence = nextSeq++;
        append(m);
    }

    /**
     * Numbers a message of the path's own and queues it ahead of the inbox: the probe of a new connection goes before
     * the data that waited for the connection, as a kernel's probe does, so the peer knows our number of paths before
     * it answers that data. Messages already numbered (those to be sent again) stay ahead of it, so numbers still
     * rise on the wire.
     */
    void addAheadOfInbox(OutgoingMessage m) {
        m.sequence = nextSeq++;
        append(m);
    }

    /**
     * Drops the multipath probes queued and never written: path 0 is about to queue a new one, which says the same or
     * newer, so however often its connection comes and goes before a write, a path holds one such probe at most
     * (PathFuzzTest found 17 held after 17 connections that never carried a write). A probe that was written stays
     * to be sent again, marked retransmitted, as the kernel resends whatever the peer has not acknowledged. Numbers
     * stay used, as a cancelled message's: the peer takes the gap.
     *
     * @return how many were dropped
     */
    int dropUnwrittenProbes() {
        int dropped = 0;
        OutgoingMessage prev = lastSent;
        for (OutgoingMessage m = firstUnsent; m != null; ) {
            OutgoingMessage next = m.next;
            if (!m.retransmit && isProbe(m)) {
                unlink(prev, m);
                dropped++;
            } else {
                prev = m;
            }
            m = next;
        }
        return dropped;
    }

    private static boolean isProbe(OutgoingMessage m) {
        return m.owner == null && !m.pong && !m.ackPing && m.sourcePort() == ConnectionPath.PROBE_PORT
                && m.destinationPort() == 0;
    }

    /**
     * The first message not yet written, or {@code null}. A transmit pass walks on from it through
     * {@link OutgoingMessage#next} and says once, with {@link #wrote}, where it stopped: no reference is stored per
     * message written.
     */
    OutgoingMessage firstUnsent() {
        return firstUnsent;
    }

    /** The newest message written and held, the one before {@link #firstUnsent()}, or {@code null}. */
    OutgoingMessage lastSent() {
        return lastSent;
    }

    /**
     * A pass wrote every message before {@code next}: {@code last} is now the newest written and held (the one
     * before {@code next}, or {@code null} if none is held), and {@code next} the first to write.
     *
     * @param last the newest message written and held, or {@code null}
     * @param next the first message not written, or {@code null} if the pass wrote them all
     */
    void wrote(OutgoingMessage last, OutgoingMessage next) {
        lastSent = last;
        firstUnsent = next;
    }

    /** Whether anything waits to be written, in the inbox or the send queue. */
    boolean hasUnsent() {
        return firstUnsent != null || inboxTop() != null;
    }

    boolean hasSent() {
        return lastSent != null;
    }

    /** The number of the newest message written and not yet released, 0 if none. */
    long newestSent() {
        return lastSent == null ? 0 : lastSent.lastSequence();
    }

    long nextSeq() {
        return nextSeq;
    }

    /** The number of the oldest message held (written or not), else {@link #nextSeq}; takes the inbox in. */
    long oldestSeq() {
        takeInbox();
        return head == null ? nextSeq : head.sequence;
    }

    /**
     * For inspection, on the path's owner, changing nothing (the inbox is walked, not taken in: its messages
     * are unnumbered, and the nodes stay as pushed until a pass takes them): the queued messages
     * and their bytes, then the written and unreleased ones and theirs.
     */
    long[] census() {
        long[] c = new long[4];
        for (OutgoingMessage m = inboxTop(); m != null; m = m.next) {
            c[0] += m.entries();
            c[1] += m.length();
        }
        boolean written = lastSent != null;
        for (OutgoingMessage m = head; m != null; m = m.next) {
            if (m == firstUnsent) {
                written = false;
            }
            c[written ? 2 : 0] += m.entries();
            c[written ? 3 : 1] += m.length();
        }
        return c;
    }

    /** Messages numbered (unsent and unreleased); the inbox is taken in first. */
    int size() {
        takeInbox();
        return count;
    }

    /** The oldest message held, written or not, or {@code null}; the others follow through its links. */
    OutgoingMessage head() {
        return head;
    }

    /**
     * The peer has everything up to {@code seq}: release those messages, oldest first. Consecutive messages of one
     * socket go back to it as one chain, in one call: one wake-up per acknowledgement, not per message.
     *
     * @return whether anything was released
     */
    boolean releaseUpTo(long seq) {
        if (lastSent == null || Long.compareUnsigned(head.sequence, seq) > 0) {
            return false;
        }
        OutgoingMessage stop = firstUnsent;           // never release what was not written
        OutgoingMessage m = head;
        MessageOwner run = null;
        OutgoingMessage first = null;
        OutgoingMessage last = null;
        int runEntries = 0;
        int runCount = 0;
        long bytes = 0;
        int released = 0;
        while (m != stop && Long.compareUnsigned(m.lastSequence(), seq) <= 0) {   // a run goes when all of it is in
            OutgoingMessage next = m.next;
            released += m.entries();
            gone(m);
            if (m == lastSent) {
                lastSent = null;                      // every written message goes
            }
            MessageOwner o = m.owner;
            if (o != run || o == null) {
                if (run != null) {
                    last.next = null;                 // the run ends here: cut it from what follows
                    run.released(first, last, runEntries, runCount, bytes);
                }
                run = o;
                first = m;
                runEntries = 0;
                runCount = 0;
                bytes = 0;
            }
            if (o != null) {
                last = m;                             // consecutive messages of one socket: already linked
                runEntries++;
                runCount += m.entries();
                bytes += m.length();
            } else {
                m.next = null;
            }
            m = next;
        }
        head = m;
        if (m == null) {
            tail = null;
        }
        count -= released;
        if (run != null) {
            last.next = null;
            run.released(first, last, runEntries, runCount, bytes);
        }
        return released > 0;                          // a run partly acknowledged stays whole
    }

    /**
     * A reset: written-but-unreleased messages go back in front, marked retransmitted, ahead of those never sent, so
     * order is kept; numbers stay. Acknowledgement pings, written or queued, go: a pong to one could no longer be
     * told from a late one, and the next connection asks afresh.
     *
     * @return how many messages will be sent again
     */
    int requeueForResend() {
        takeInbox();
        int requeued = 0;
        boolean written = lastSent != null;
        OutgoingMessage prev = null;
        for (OutgoingMessage m = head; m != null; ) {
            OutgoingMessage next = m.next;
            if (m == firstUnsent) {
                written = false;
            }
            if (m.ackPing) {
                unlink(prev, m);
            } else {
                if (written) {
                    m.retransmit = true;
                    requeued += m.entries();
                }
                prev = m;
            }
            m = next;
        }
        firstUnsent = head;
        lastSent = null;
        counters.add(Counter.SEND_RETRANSMITTED, requeued);
        return requeued;
    }

    /**
     * The peer restarted: what it never acknowledged is failed to its sockets (the kernel's flush); what was never
     * sent goes to the new peer. Numbers keep rising, never start again: the new peer may already have taken
     * messages numbered up to the newest written on its connection before we read its probe (flushed here), and
     * its duplicate rule drops a resent message numbered below that, which a pong would then have released unread
     * (AcknowledgementModelTest found it). Numbers above everything written are new to it.
     *
     * @return how many messages were discarded
     */
    int flushForPeerRestart() {
        takeInbox();
        int flushed = 0;
        while (lastSent != null) {
            OutgoingMessage m = head;
            unlink(null, m);
            flushed += m.entries();
            gone(m);
            if (m.owner != null) {
                m.owner.failed(m, destination(m), RdsDatagram.Failure.PEER_RESTARTED, null);
            }
        }
        OutgoingMessage prev = null;
        for (OutgoingMessage m = head; m != null; ) {
            OutgoingMessage next = m.next;
            if (m.ackPing) {
                unlink(prev, m);
            } else {
                m.retransmit = false;                 // the new peer never had them
                prev = m;
            }
            m = next;
        }
        counters.add(Counter.SEND_FLUSHED, flushed);
        return flushed;
    }

    /** Drops every message of {@code owner} to {@code port}, queued or written and unreleased; returns how many. */
    int cancel(MessageOwner owner, int port) {
        takeInbox();
        return cancelMatching(owner, port);
    }

    /** Drops every message of {@code owner}, queued or written and unreleased (its socket closed); returns how many. */
    int purge(MessageOwner owner) {
        takeInbox();
        return cancelMatching(owner, -1);
    }

    private int cancelMatching(MessageOwner owner, int port) {
        int n = 0;
        OutgoingMessage prev = null;
        for (OutgoingMessage m = head; m != null; ) {
            OutgoingMessage next = m.next;
            if (m.owner == owner && (port < 0 || m.destinationPort == port)) {
                unlink(prev, m);
                n += m.entries();
                owner.failed(m, destination(m), RdsDatagram.Failure.CANCELLED, null);   // the owner recycles it
            } else {
                prev = m;
            }
            m = next;
        }
        return n;
    }

    /**
     * Fails every message held, written or not, to its socket with {@code reason}; the path's own messages (pings,
     * pongs, probes) go without a word. Numbers stay used: the peer may have some of them.
     *
     * @return how many sockets' messages were failed
     */
    int failAll(RdsDatagram.Failure reason) {
        return failAll(reason, null);
    }

    /**
     * {@link #failAll(RdsDatagram.Failure)}, with the cause in words for each notification.
     *
     * @return how many sockets' messages were failed
     */
    int failAll(RdsDatagram.Failure reason, String why) {
        takeInbox();
        int n = 0;
        while (head != null) {
            OutgoingMessage m = head;
            unlink(null, m);
            gone(m);
            if (m.owner != null) {
                n += m.entries();
                m.owner.failed(m, destination(m), reason, why);
            }
        }
        return n;
    }

    /** The stack is closing: forget everything. */
    void clear() {
        takeInbox();
        head = null;
        tail = null;
        firstUnsent = null;
        lastSent = null;
        count = 0;
        pongsHeld = 0;
    }

    private InetSocketAddress destination(OutgoingMessage m) {
        return new InetSocketAddress(peer, m.destinationPort);
    }

    @Override
    public String toString() {
        long[] c = census();
        return "nextTx=" + Long.toUnsignedString(nextSeq) + " queued=" + c[0] + " sent=" + c[2];
    }
}
