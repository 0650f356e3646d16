package org.rds4j.core.conn;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayDeque;
import java.util.Iterator;
import org.rds4j.RdsDatagram;
import org.rds4j.core.RdsCounters;
import org.rds4j.core.RdsCounters.Counter;

/**
 * A path's messages on their way: the inbox application threads push to, the messages numbered and not yet written
 * (the kernel's {@code c_send_queue}), and those written and kept until the peer has them ({@code c_retrans}).
 *
 * <p>Sequence numbers are given here, in the order messages reach the send queue, so the stream's order is the
 * numbers' order. A message never changes path and keeps its number for life, so a resend after a reset carries it.
 *
 * <p>Threads: {@link #push} is lock-free and may be called by any thread; everything else runs under the owning
 * path's monitor, which makes the inbox single-consumer.
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
    private final ArrayDeque<OutgoingMessage> unsent = new ArrayDeque<>();
    private final ArrayDeque<OutgoingMessage> sent = new ArrayDeque<>();
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
        OutgoingMessage reversed = null;              // the stack is newest first: reverse it
        while (m != null) {
            OutgoingMessage next = m.next;
            m.next = reversed;
            reversed = m;
            m = next;
        }
        int n = 0;
        while (reversed != null) {
            OutgoingMessage next = reversed.next;
            reversed.next = null;
            reversed.sequence = nextSeq++;
            unsent.addLast(reversed);
            reversed = next;
            n++;
        }
        counters.add(Counter.SEND_QUEUED, n);         // once per batch: senders share no counter
    }

    /**
     * Pongs queued or written and not yet acknowledged (each is kept, like data, until the peer has it). Under the
     * path's monitor.
     *
     * @return how many pongs the path holds
     */
    int pongsHeld() {
        return pongsHeld;
    }

    /** A pong is about to be pushed (under the path's monitor): it counts from now until it leaves the queues. */
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
        unsent.addLast(m);
    }

    /**
     * Numbers a message of the path's own and queues it ahead of the inbox: the probe of a new connection goes before
     * the data that waited for the connection, as a kernel's probe does, so the peer knows our number of paths before
     * it answers that data. Messages already numbered (those to be sent again) stay ahead of it, so numbers still
     * rise on the wire.
     */
    void addAheadOfInbox(OutgoingMessage m) {
        m.sequence = nextSeq++;
        unsent.addLast(m);
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
        int before = unsent.size();
        unsent.removeIf(m -> !m.retransmit && isProbe(m));
        return before - unsent.size();
    }

    private static boolean isProbe(OutgoingMessage m) {
        return m.owner == null && !m.pong && !m.ackPing && m.sourcePort() == ConnectionPath.PROBE_PORT
                && m.destinationPort() == 0;
    }

    /** The next message to write, or {@code null}. */
    OutgoingMessage pollUnsent() {
        return unsent.pollFirst();
    }

    /** A message taken by {@link #pollUnsent} that did not go after all: it stays first. */
    void unpoll(OutgoingMessage m) {
        unsent.addFirst(m);
    }

    /** A message was written: keep it until the peer has it. */
    void written(OutgoingMessage m) {
        sent.addLast(m);
    }

    /** Whether anything waits to be written, in the inbox or the send queue. */
    boolean hasUnsent() {
        return !unsent.isEmpty() || inboxTop() != null;
    }

    boolean hasSent() {
        return !sent.isEmpty();
    }

    /** The number of the newest message written and not yet released, 0 if none. */
    long newestSent() {
        OutgoingMessage tail = sent.peekLast();
        return tail == null ? 0 : tail.sequence;
    }

    long nextSeq() {
        return nextSeq;
    }

    /** The number of the oldest message not yet released (written or not), {@link #nextSeq} if none; takes the inbox in. */
    long oldestSeq() {
        takeInbox();
        OutgoingMessage m = sent.peekFirst();
        if (m == null) {
            m = unsent.peekFirst();
        }
        return m == null ? nextSeq : m.sequence;
    }

    /**
     * For inspection, under the path's monitor, changing nothing (the inbox is walked, not taken in: its messages
     * are unnumbered, and the nodes stay as pushed, since only the monitor's holder takes them): the queued messages
     * and their bytes, then the written and unreleased ones and theirs.
     */
    long[] census() {
        long[] c = new long[4];
        for (OutgoingMessage m = inboxTop(); m != null; m = m.next) {
            c[0]++;
            c[1] += m.length();
        }
        for (OutgoingMessage m : unsent) {
            c[0]++;
            c[1] += m.length();
        }
        for (OutgoingMessage m : sent) {
            c[2]++;
            c[3] += m.length();
        }
        return c;
    }

    /** Messages numbered (unsent and unreleased); the inbox is taken in first. */
    int size() {
        takeInbox();
        return unsent.size() + sent.size();
    }

    /**
     * The peer has everything up to {@code seq}: release those messages, oldest first. Consecutive messages of one
     * socket go back to it as one chain, in one call: one wake-up per acknowledgement, not per message.
     *
     * @return whether anything was released
     */
    boolean releaseUpTo(long seq) {
        OutgoingMessage m;
        boolean any = false;
        MessageOwner run = null;
        OutgoingMessage first = null;
        OutgoingMessage last = null;
        int count = 0;
        long bytes = 0;
        while ((m = sent.peekFirst()) != null && Long.compareUnsigned(m.sequence, seq) <= 0) {
            sent.pollFirst();
            any = true;
            gone(m);
            MessageOwner o = m.owner;
            if (o == null) {
                continue;
            }
            if (o != run) {
                if (run != null) {
                    run.released(first, last, count, bytes);
                }
                run = o;
                first = null;
                count = 0;
                bytes = 0;
            }
            m.next = null;
            if (first == null) {
                first = m;
            } else {
                last.next = m;
            }
            last = m;
            count++;
            bytes += m.length();
        }
        if (run != null) {
            run.released(first, last, count, bytes);
        }
        return any;
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
        OutgoingMessage m;
        while ((m = sent.pollLast()) != null) {
            if (m.ackPing) {
                continue;
            }
            m.retransmit = true;
            unsent.addFirst(m);
            requeued++;
        }
        unsent.removeIf(q -> q.ackPing);
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
        OutgoingMessage m;
        while ((m = sent.pollFirst()) != null) {
            flushed++;
            gone(m);
            if (m.owner != null) {
                m.owner.failed(m, destination(m), RdsDatagram.Failure.PEER_RESTARTED);
            }
        }
        unsent.removeIf(q -> q.ackPing);
        for (OutgoingMessage q : unsent) {
            q.retransmit = false;                     // the new peer never had them
        }
        counters.add(Counter.SEND_FLUSHED, flushed);
        return flushed;
    }

    /** Drops every message of {@code owner} to {@code port}, queued or written and unreleased; returns how many. */
    int cancel(MessageOwner owner, int port) {
        takeInbox();
        return cancelFrom(unsent, owner, port) + cancelFrom(sent, owner, port);
    }

    /** Drops every message of {@code owner}, queued or written and unreleased (its socket closed); returns how many. */
    int purge(MessageOwner owner) {
        takeInbox();
        return cancelFrom(unsent, owner, -1) + cancelFrom(sent, owner, -1);
    }

    private int cancelFrom(ArrayDeque<OutgoingMessage> queue, MessageOwner owner, int port) {
        int n = 0;
        for (Iterator<OutgoingMessage> it = queue.iterator(); it.hasNext(); ) {
            OutgoingMessage m = it.next();
            if (m.owner == owner && (port < 0 || m.destinationPort == port)) {
                it.remove();
                owner.failed(m, destination(m), RdsDatagram.Failure.CANCELLED);   // the owner recycles it
                n++;
            }
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
        takeInbox();
        int n = 0;
        for (ArrayDeque<OutgoingMessage> q : java.util.List.of(sent, unsent)) {
            OutgoingMessage m;
            while ((m = q.pollFirst()) != null) {
                gone(m);
                if (m.owner != null) {
                    m.owner.failed(m, destination(m), reason);
                    n++;
                }
            }
        }
        return n;
    }

    /** The stack is closing: forget everything. */
    void clear() {
        takeInbox();
        unsent.clear();
        sent.clear();
        pongsHeld = 0;
    }

    private InetSocketAddress destination(OutgoingMessage m) {
        return new InetSocketAddress(peer, m.destinationPort);
    }

    @Override
    public String toString() {
        return "nextTx=" + Long.toUnsignedString(nextSeq) + " queued=" + unsent.size()
                + (inboxTop() != null ? "+inbox" : "") + " sent=" + sent.size();
    }
}
