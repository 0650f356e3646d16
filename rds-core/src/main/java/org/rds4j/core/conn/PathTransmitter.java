package org.rds4j.core.conn;

import java.nio.ByteBuffer;
import org.rds4j.core.cong.CongestionFrames;
import org.rds4j.core.cong.CongestionMap;
import org.rds4j.core.spi.FrameSink;
import org.rds4j.core.wire.RdsHeader;

/**
 * One transmit pass of a path, the kernel's {@code rds_send_xmit}: the congestion map first if one is due, then
 * queued messages while the sink has room, each framed with the path's current h_ack. A pass is bounded, so one busy
 * path cannot keep its I/O thread from the other connections it serves. Runs under the path's monitor on the I/O
 * thread; allocates nothing.
 */
final class PathTransmitter {
    /** Bytes one transmit pass writes at most before it yields the I/O thread to other connections. */
    static final long MAX_PASS_BYTES = 1 << 20;

    private final RdsHeader header = new RdsHeader();
    private final ByteBuffer headerBytes = ByteBuffer.allocate(RdsHeader.SIZE);
    private final CongestionFrames congestionFrames = new CongestionFrames();

    /**
     * Writes what the sink takes.
     *
     * @param map our congestion map if one is due, else {@code null}
     * @param ack the h_ack every frame carries
     * @param askForAck whether messages may ask for a prompt acknowledgement (the peer acknowledges)
     * @return whether the pass stopped at its bound with messages left: ask the transport for another
     */
    boolean pass(FrameSink sink, SendQueue queue, Acknowledgements acks, CongestionMap map, long ack,
                 boolean askForAck) {
        if (map != null) {
            congestionFrames.write(map, sink);
        }
        queue.takeInbox();
        long passStart = sink.streamOffset();
        OutgoingMessage m;
        while (sink.isWritable() && (m = queue.pollUnsent()) != null) {
            if (m.owner != null && m.owner.isClosed()) {
                m.next = null;                         // closing a socket discards what it has queued, as the kernel
                m.owner.released(m, m, 1, m.length());
                continue;
            }
            if (sink.streamOffset() - passStart >= MAX_PASS_BYTES) {
                queue.unpoll(m);
                return true;
            }
            m.header(header, ack, askForAck);
            headerBytes.clear();
            header.encode(headerBytes);
            headerBytes.flip();
            sink.write(headerBytes, m.payload);
            acks.wrote(m);                             // the h_ack just written covers everything received so far
            if (m.retained) {
                queue.written(m);
            }
        }
        return false;
    }
}
