package org.rds4j.core.wire;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.rds4j.core.path.Addresses;

/**
 * A minimal reader of classic pcap files that reassembles the TCP payload of each direction of each connection.
 * Link types: Ethernet (with 802.1Q tags), Linux cooked v1 and v2, raw IP. Network: IPv4 and IPv6 (v4-mapped IPv6
 * addresses are reported as IPv4). Reassembly orders segments by TCP sequence number, drops retransmitted
 * duplicates and records holes; segments carrying bytes before the first one seen (no SYN captured) are trimmed.
 */
final class PcapTcpStreams {
    private static final int LINKTYPE_NULL = 0;
    private static final int LINKTYPE_ETHERNET = 1;
    private static final int LINKTYPE_RAW = 101;
    private static final int LINKTYPE_LINUX_SLL = 113;
    private static final int LINKTYPE_IPV4 = 228;
    private static final int LINKTYPE_IPV6 = 229;
    private static final int LINKTYPE_LINUX_SLL2 = 276;

    /** One direction of one TCP connection. */
    static final class Direction {
        final String source;
        final String destination;
        final int sourcePort;
        final int destinationPort;
        /** A SYN without ACK was sent in this direction: this side opened the connection. */
        boolean opened;
        boolean fin;
        boolean rst;
        /** A segment was cut short by the capture's snap length. */
        boolean truncated;
        private Long isn;
        private final List<long[]> order = new ArrayList<>(); // {tcp seq, index into payloads}
        private final List<byte[]> payloads = new ArrayList<>();
        /** Filled by {@link #reassemble}: the new bytes of each segment, in stream order. */
        final List<byte[]> chunks = new ArrayList<>();
        int holes;
        int duplicates;
        long bytes;

        Direction(String source, int sourcePort, String destination, int destinationPort) {
            this.source = source;
            this.sourcePort = sourcePort;
            this.destination = destination;
            this.destinationPort = destinationPort;
        }

        /** As the golden tables name a stream: {@code 10.213.0.2:53691->10.213.0.3:16385}. */
        String name() {
            return source + ":" + sourcePort + "->" + destination + ":" + destinationPort;
        }

        @Override
        public String toString() {
            return name() + " (" + bytes + " bytes)";
        }

        private void reassemble() {
            // relative offsets from the first byte: after the SYN if captured, else the lowest sequence seen
            long base;
            if (isn != null) {
                base = (isn + 1) & 0xFFFF_FFFFL;
            } else if (!order.isEmpty()) {
                long first = order.get(0)[0];
                int lowest = 0;
                for (long[] s : order) {
                    lowest = Math.min(lowest, (int) (s[0] - first));
                }
                base = (first + lowest) & 0xFFFF_FFFFL;
            } else {
                return;
            }
            List<long[]> segs = new ArrayList<>();
            for (long[] s : order) {
                segs.add(new long[] {(int) (s[0] - base), s[1]});
            }
            segs.sort(Comparator.comparingLong(s -> s[0])); // stable: earlier capture first among equals
            long next = 0;
            for (long[] s : segs) {
                byte[] p = payloads.get((int) s[1]);
                long start = s[0];
                long end = start + p.length;
                if (end <= next) {
                    duplicates++;
                    continue;
                }
                if (start > next) {
                    holes++;
                    next = start;
                }
                chunks.add(Arrays.copyOfRange(p, (int) (next - start), p.length));
                bytes += end - next;
                next = end;
            }
        }
    }

    private final Map<String, Direction> directions = new LinkedHashMap<>();
    private int packets;

    private PcapTcpStreams() {
    }

    static PcapTcpStreams read(byte[] file) {
        PcapTcpStreams r = new PcapTcpStreams();
        r.parse(file);
        r.directions.values().forEach(Direction::reassemble);
        return r;
    }

    /** Every direction seen, in order of first appearance (including directions that carried no bytes). */
    List<Direction> directions() {
        return new ArrayList<>(directions.values());
    }

    Direction direction(String name) {
        Direction d = directions.get(name);
        if (d == null) {
            throw new IllegalArgumentException("no stream " + name + " in " + directions.keySet());
        }
        return d;
    }

    int packets() {
        return packets;
    }

    private void parse(byte[] file) {
        ByteBuffer in = ByteBuffer.wrap(file).order(ByteOrder.LITTLE_ENDIAN);
        int magic = in.getInt(0);
        if (magic == 0xA1B2C3D4 || magic == 0xA1B23C4D) {
            in.order(ByteOrder.LITTLE_ENDIAN);
        } else if (Integer.reverseBytes(magic) == 0xA1B2C3D4 || Integer.reverseBytes(magic) == 0xA1B23C4D) {
            in.order(ByteOrder.BIG_ENDIAN);
        } else {
            throw new IllegalArgumentException("not a classic pcap file (magic " + Integer.toHexString(magic) + ")");
        }
        int linkType = in.getInt(20) & 0x0FFF_FFFF; // the upper bits may carry FCS information
        in.position(24);
        while (in.remaining() >= 16) {
            in.getInt(); // seconds
            in.getInt(); // micro- or nanoseconds
            int captured = in.getInt();
            in.getInt(); // original length
            if (captured < 0 || captured > in.remaining()) {
                break; // the file was cut inside a record
            }
            byte[] frame = new byte[captured];
            in.get(frame);
            packets++;
            link(ByteBuffer.wrap(frame), linkType);
        }
    }

    private void link(ByteBuffer f, int linkType) {
        int etherType;
        switch (linkType) {
            case LINKTYPE_ETHERNET -> {
                if (f.remaining() < 14) {
                    return;
                }
                f.position(12);
                etherType = Short.toUnsignedInt(f.getShort());
                while ((etherType == 0x8100 || etherType == 0x88A8) && f.remaining() >= 4) {
                    f.getShort();
                    etherType = Short.toUnsignedInt(f.getShort());
                }
            }
            case LINKTYPE_LINUX_SLL -> {
                if (f.remaining() < 16) {
                    return;
                }
                etherType = Short.toUnsignedInt(f.getShort(14));
                f.position(16);
            }
            case LINKTYPE_LINUX_SLL2 -> {
                if (f.remaining() < 20) {
                    return;
                }
                etherType = Short.toUnsignedInt(f.getShort(0));
                f.position(20);
            }
            case LINKTYPE_NULL -> {
                if (f.remaining() < 4) {
                    return;
                }
                f.position(4);
                etherType = f.remaining() > 0 && (f.get(4) & 0xF0) == 0x60 ? 0x86DD : 0x0800;
            }
            case LINKTYPE_RAW, LINKTYPE_IPV4, LINKTYPE_IPV6 -> etherType =
                    f.remaining() > 0 && (f.get(0) & 0xF0) == 0x60 ? 0x86DD : 0x0800;
            default -> throw new IllegalArgumentException("unsupported pcap link type " + linkType);
        }
        ByteBuffer ip = f.slice();
        if (etherType == 0x0800) {
            ipv4(ip);
        } else if (etherType == 0x86DD) {
            ipv6(ip);
        }
    }

    private void ipv4(ByteBuffer ip) {
        if (ip.remaining() < 20 || (ip.get(0) & 0xF0) != 0x40) {
            return;
        }
        int ihl = (ip.get(0) & 0x0F) * 4;
        int total = Short.toUnsignedInt(ip.getShort(2));
        int fragment = ip.getShort(6) & 0x3FFF; // more-fragments flag and offset
        if (ip.get(9) != 6 || fragment != 0) {
            return;
        }
        boolean cut = false;
        if (total == 0) {
            total = ip.remaining(); // segmentation offload: length left to the capture
        } else if (total > ip.remaining()) {
            cut = true;
            total = ip.remaining();
        }
        if (ihl < 20 || ihl > total) {
            return;
        }
        tcp(address(ip, 12, 4), address(ip, 16, 4), ip.slice(ihl, total - ihl), cut);
    }

    private void ipv6(ByteBuffer ip) {
        if (ip.remaining() < 40 || (ip.get(0) & 0xF0) != 0x60) {
            return;
        }
        int payloadLength = Short.toUnsignedInt(ip.getShort(4));
        int next = Byte.toUnsignedInt(ip.get(6));
        int pos = 40;
        // hop-by-hop, routing and destination options precede TCP in a packet from a socket
        while ((next == 0 || next == 43 || next == 60) && ip.remaining() >= pos + 8) {
            next = Byte.toUnsignedInt(ip.get(pos));
            pos += 8 + 8 * Byte.toUnsignedInt(ip.get(pos + 1));
        }
        if (next != 6) {
            return;
        }
        int end = payloadLength == 0 ? ip.remaining() : 40 + payloadLength;
        boolean cut = end > ip.remaining();
        end = Math.min(end, ip.remaining());
        tcp(address(ip, 8, 16), address(ip, 24, 16), ip.slice(pos, end - pos), cut);
    }

    private static String address(ByteBuffer ip, int offset, int length) {
        byte[] a = new byte[length];
        ip.get(offset, a);
        try {
            return Addresses.normalize(InetAddress.getByAddress(a)).getHostAddress();
        } catch (UnknownHostException e) {
            throw new AssertionError(e);
        }
    }

    private void tcp(String src, String dst, ByteBuffer t, boolean cut) {
        if (t.remaining() < 20) {
            return;
        }
        int sport = Short.toUnsignedInt(t.getShort(0));
        int dport = Short.toUnsignedInt(t.getShort(2));
        long seq = Integer.toUnsignedLong(t.getInt(4));
        int dataOffset = ((t.get(12) >> 4) & 0x0F) * 4;
        int flags = t.get(13) & 0xFF;
        Direction d = directions.computeIfAbsent(src + ":" + sport + "->" + dst + ":" + dport,
                k -> new Direction(src, sport, dst, dport));
        boolean syn = (flags & 0x02) != 0;
        boolean ack = (flags & 0x10) != 0;
        if (syn) {
            d.isn = seq;
            d.opened |= !ack;
        }
        d.fin |= (flags & 0x01) != 0;
        d.rst |= (flags & 0x04) != 0;
        d.truncated |= cut;
        if (dataOffset < 20 || dataOffset > t.remaining()) {
            return;
        }
        int length = t.remaining() - dataOffset;
        if (length > 0 && (flags & 0x04) == 0) {
            byte[] payload = new byte[length];
            t.get(dataOffset, payload);
            long s = syn ? (seq + 1) & 0xFFFF_FFFFL : seq; // data on a SYN (fast open) follows the SYN's number
            d.order.add(new long[] {s, d.payloads.size()});
            d.payloads.add(payload);
        }
    }
}
