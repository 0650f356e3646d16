package org.rds4j.core.wire;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.rds4j.core.wire.PcapTcpStreams.Direction;

/**
 * What rds4j's own codec reads from a capture: every TCP direction to or from an RDS port, reassembled by rds-core's
 * test pcap reader ({@link PcapTcpStreams}, package-private, hence this class in its package) and cut into messages
 * by {@link FrameDecoder}, as a receiver does segment by segment.
 */
public final class CodecFrames {
    /** One decoded message, in the form the dissector's fields are compared with. */
    public record Frame(long seq, long len, int sport, int dport, int flags, String exthdrs, String kind) {
        @Override
        public String toString() {
            return kind + " seq=" + Long.toUnsignedString(seq) + " len=" + len + " sport=" + sport + " dport=" + dport
                    + " flags=0x" + Integer.toHexString(flags) + " ext=" + exthdrs;
        }
    }

    /**
     * One direction of a TCP connection: its messages, and what the reader saw of it. {@code fromStart}: the
     * connection's opening SYN is in the capture, so the stream is read from its first byte.
     */
    public record Stream(String name, List<Frame> frames, int holes, boolean endsInsideMessage, boolean fromStart) {
    }

    private CodecFrames() {
    }

    /**
     * The messages of every direction whose source or destination TCP port is {@code rdsPort}, keyed
     * {@code src:port->dst:port}, in order of first appearance.
     */
    public static Map<String, Stream> read(byte[] pcap, int rdsPort) throws RdsProtocolException {
        Map<String, Stream> out = new LinkedHashMap<>();
        PcapTcpStreams streams = PcapTcpStreams.read(pcap);
        Map<String, Direction> byName = new LinkedHashMap<>();
        streams.directions().forEach(d -> byName.put(d.name(), d));
        for (Direction d : streams.directions()) {
            if (d.sourcePort != rdsPort && d.destinationPort != rdsPort) {
                continue;
            }
            List<Frame> frames = new ArrayList<>();
            FrameDecoder decoder = new FrameDecoder(0xFFFF_FFFFL); // no cap: the dissector has none either
            FrameDecoder.Listener listener = new FrameDecoder.Listener() {
                @Override
                public ByteBuffer payloadBuffer(RdsHeader header) {
                    return null;
                }

                @Override
                public void onMessage(RdsHeader h, ByteBuffer payload) {
                    frames.add(new Frame(h.sequence(), h.length(), h.sourcePort(), h.destinationPort(), h.flags(),
                            exthdrs(h.extensions()), kind(h)));
                }
            };
            for (byte[] chunk : d.chunks) {
                decoder.decode(ByteBuffer.wrap(chunk), listener);
            }
            Direction reverse = byName.get(d.destination + ":" + d.destinationPort + "->" + d.source + ":"
                    + d.sourcePort);
            boolean fromStart = d.opened || (reverse != null && reverse.opened);
            out.put(d.name(), new Stream(d.name(), frames, d.holes, decoder.inMessage(), fromStart));
        }
        return out;
    }

    /**
     * The kind of a message as rds-core's golden tests classify it (congestion map by the exact flag test, then ping,
     * probe ping, pong, probe pong by ports), plus rds4j's ack-only message: port 0 to port 0, not a map.
     */
    public static String kind(RdsHeader h) {
        if (!h.isCongestionMap() && h.sourcePort() == 0 && h.destinationPort() == 0) {
            return "ACK_ONLY";
        }
        return Golden.kind(h).name();
    }

    /**
     * The extension entries as the dissector's {@code rds.exthdrs} field writes them: {@code type:payloadhex} for each
     * entry in order, separated by spaces, or {@code none}.
     */
    public static String exthdrs(byte[] area) {
        StringBuilder sb = new StringBuilder();
        ExtensionHeaders.forEach(area, (type, a, offset, size) -> {
            if (sb.length() > 0) {
                sb.append(' ');
            }
            sb.append(type).append(':');
            for (int i = 0; i < size; i++) {
                sb.append(String.format("%02x", a[offset + i]));
            }
        });
        return sb.length() == 0 ? "none" : sb.toString();
    }
}
