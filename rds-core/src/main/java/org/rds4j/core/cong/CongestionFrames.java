package org.rds4j.core.cong;

import java.nio.ByteBuffer;
import org.rds4j.core.spi.FrameSink;
import org.rds4j.core.wire.HeaderEncoder;
import org.rds4j.core.wire.RdsHeader;

/**
 * Congestion maps on the wire, both ways: the kernel's congestion-map messages of {@code cong.c}. One per path, used
 * by the path's owner, its connection's I/O thread.
 */
public final class CongestionFrames {
    /** A map's header never changes (sequence 0, no ports, h_len 8192, the bitmap flag): encoded once. */
    private final HeaderEncoder header = new HeaderEncoder();
    private FrameSink sink;
    /** Writes the map's bytes behind the encoded header, allocated once: a lambda per write would be garbage. */
    private final java.util.function.Consumer<ByteBuffer> writeBits = bits -> sink.write(header.buffer(), bits);

    /** Frames for one path's maps. */
    public CongestionFrames() {
        header.encode(0, 0, CongestionMap.BYTES, 0, 0, RdsHeader.FLAG_CONG_BITMAP, null);
    }

    /**
     * Writes {@code local}'s map: sequence 0, no ports, flags exactly {@link RdsHeader#FLAG_CONG_BITMAP}, the 8192
     * bytes. It goes first on every new connection and after every change, takes no sequence number and is never
     * resent; a fresh one follows any reconnect.
     *
     * @param local the congestion map of our address on this connection
     * @param sink where the frame goes, during {@link org.rds4j.core.spi.ConnectionHandler#transmit}
     */
    public void write(CongestionMap local, FrameSink sink) {
        this.sink = sink;
        try {
            local.writeTo(writeBits);               // the sink copies under the map's monitor (a leaf lock)
        } finally {
            this.sink = null;
        }
    }

    /**
     * A peer's map arrived (position = 8192, as the decoder filled it): replace {@code peerMap} and, if any bit
     * changed, run {@code notify} (wake congestion monitors) as one step under the map's monitor. rds4j sends a copy
     * of each change on every path, so only the first copy to arrive notifies. A sender that adds a port to
     * its monitor mask under the same monitor then sees its bit fire only for maps that arrive after it was added.
     *
     * @param peerMap the sending peer address's map, replaced in place
     * @param map the message's payload, 8192 bytes written and not yet flipped
     * @param notify wakes the stack's congestion monitors
     */
    public static void received(CongestionMap peerMap, ByteBuffer map, Runnable notify) {
        map.flip();
        synchronized (peerMap) {
            if (peerMap.replace(map)) {
                notify.run();
            }
        }
    }
}
