package org.rds4j.core.path;

import org.rds4j.core.cong.CongestionFrames;
import org.rds4j.core.cong.CongestionMap;
import org.rds4j.core.spi.FrameSink;
import org.rds4j.core.wire.HeaderEncoder;

/**
 * One transmit pass of a path, the kernel's {@code rds_send_xmit}: the congestion map first if one is due, then
 * queued messages while the sink has room, each framed with the path's current h_ack. A pass is bounded, so one busy
 * path cannot keep its I/O thread from the other connections' passes: the rest is a pass of its own, which the
 * transport runs after those already asked for. Runs on the connection's I/O thread, which owns the path; allocates
 * nothing. Also the bookkeeping around the passes: the map due, the catch-up hold, and the ping when everything
 * written has left and the peer does not acknowledge by itself.
 */
final class PathTransmitter {
    /** Bytes one transmit pass writes at most before it yields the I/O thread to other connections. */
    static final long MAX_PASS_BYTES = 1 << 20;

    private final ConnectionPath path;
    private final Connection connection;
    private final SendQueue queue;
    private final Acknowledgements acks;
    private final AckRequests ackRequests;
    private final HeaderEncoder headers = new HeaderEncoder();
    /**
     * Our congestion map goes ahead of the next pass's messages. Raised by any thread (a reader whose queue crossed
     * its mark, {@link #requestMap}), lowered by the owner's pass before it copies the map: a change made before a
     * raise that the pass then lowers is in the copy, since both go through the map's monitor.
     */
    private final MapRequest mapQueued = new MapRequest();
    /** The stream offset after the last pass. */
    private long lastPassEnd;
    private final CongestionFrames congestionFrames = new CongestionFrames();
    /** Whether the pass wrote a socket's message (not only the path's own: map, ping, probe, ack-only). */
    private boolean wroteSocketData;

    PathTransmitter(ConnectionPath path, SendQueue queue, Acknowledgements acks, AckRequests ackRequests) {
        this.path = path;
        this.connection = path.connection();
        this.queue = queue;
        this.acks = acks;
        this.ackRequests = ackRequests;
    }

    /** Our map goes ahead of the next pass's messages. Any thread; the caller then asks for a pass. */
    void requestMap() {
        mapQueued.raise();
    }

    /**
     * On the transport's I/O thread: writes queued frames while the connection has room. Paths above 0 hold their
     * messages while path 0 catches up after the lanes opened ({@link Multipath}); path 0 notes its progress.
     */
    void transmit(PathConnection pc, FrameSink sink) {
        assert connection.ownerOnly();
        if (path.streamUnwritten) {
            path.streamUnwritten = false;         // before the inbox is taken in: a later push sets it again
        }
        if (pc != path.currentConnection() || path.state() != PathState.UP) {
            return;
        }
        Multipath mp = connection.multipath();
        if (path.index() > 0 && mp.catchingUp()) {
            return;                               // path 0 kicks this path once it has caught up
        }
        // The map waits until what was written before has left: a peer that stops reading would otherwise have a map
        // (in a transport batch of its own) queued for it at every change of our ports, up to the transport's
        // high-water mark on each connection. A map that waits goes once the connection drains (transmitted below
        // asks for the pass), and then it is the current one, as the kernel's single queued map.
        CongestionMap map = null;
        if (mapQueued.raised() && sink.isDrained() && mapQueued.take()) {
            map = connection.localMap();
        }
        if (acks.waiting()) {
            // An ack-only message waits: a queued frame (the inbox counts) carries the acknowledgement; else it goes
            // once due, and a pass that comes early has the transport come back then.
            long now = connection.env().nanoTime();
            OutgoingMessage ackOnly = acks.ackOnlyIfDue(queue.hasUnsent(), now, connection.dataPasses());
            if (ackOnly == null && acks.waiting() && !pc.requestTransmitAfter(acks.dueInNanos(now))) {
                ackOnly = acks.ackOnlyNow();
            }
            if (ackOnly != null) {
                queue.add(ackOnly);
            }
        }
        if (pass(sink, queue, acks, map, path.receiver().ackValue(), connection.peerAcks().acknowledges())) {
            pc.requestTransmit();                 // bounded pass: the rest after the other connections' passes
        }
        if (wroteSocketData) {
            wroteSocketData = false;
            connection.wroteData();               // traffic goes back to the peer: its acknowledgements may wait
        }
        lastPassEnd = sink.streamOffset();
        if (path.index() == 0 && mp.path0Progress(queue)) {
            connection.caughtUp();
        }
    }

    /**
     * Everything written up to {@code streamOffset} left the transport. If that is all we wrote and the peer does
     * not acknowledge by itself, ask it with a ping.
     */
    void transmitted(PathConnection pc, long streamOffset) {
        assert connection.ownerOnly();
        PathConnection kick = null;
        if (pc == path.currentConnection() && streamOffset >= lastPassEnd) {
            if (!connection.peerAcks().acknowledges()) {
                kick = ackRequests.request(false);
            }
            if (kick == null && mapQueued.raised()) {
                kick = pc;                         // a map waited for the connection to drain
            }
        }
        if (kick != null) {
            kick.requestTransmit();
        }
    }

    /**
     * Writes what the sink takes.
     *
     * @param map our congestion map if one is due, else {@code null}
     * @param ack the h_ack every frame carries
     * @param askForAck whether messages may ask for a prompt acknowledgement (the peer acknowledges)
     * @return whether the pass stopped at its bound with messages left: ask the transport for another
     */
    private boolean pass(FrameSink sink, SendQueue queue, Acknowledgements acks, CongestionMap map, long ack,
                         boolean askForAck) {
        if (map != null) {
            congestionFrames.write(map, sink);
        }
        queue.takeInbox();
        long passStart = sink.streamOffset();
        // Walks the queue through the messages' own links and moves its cursors once, at the end: a reference stored
        // per message costs a fence in G1's write barrier (SendQueue).
        OutgoingMessage prev = queue.lastSent();
        OutgoingMessage m = queue.firstUnsent();
        boolean more = false;
        while (m != null && sink.isWritable()) {
            OutgoingMessage next = m.next;
            if (m.owner != null && m.owner.isClosed()) {
                queue.unlink(prev, m);                 // closing a socket discards what it has queued, as the kernel
                m.owner.released(m, m, 1, m.entries(), m.length());
                m = next;
                continue;
            }
            if (sink.streamOffset() - passStart >= MAX_PASS_BYTES) {
                more = true;
                break;
            }
            wroteSocketData |= m.owner != null;
            m.writeTo(sink, headers, ack, askForAck);   // a run writes a frame per message it carries
            acks.wrote(m);                             // the h_ack just written covers everything received so far
            if (m.retained) {
                prev = m;                              // kept until the peer has it
            } else {
                queue.unlink(prev, m);
            }
            m = next;
        }
        queue.wrote(prev, m);
        return more;
    }
}
