package org.rds4j.core.stack;

import org.rds4j.core.socket.CoreSocket;
import org.rds4j.core.socket.ReceiveQueue;
import org.rds4j.core.socket.SendBuffer;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import org.rds4j.RdsCongestionMapInfo;
import org.rds4j.RdsConnectionInfo;
import org.rds4j.RdsSocketInfo;
import org.rds4j.core.cong.CongestionMap;
import org.rds4j.core.cong.CongestionMonitor;
import org.rds4j.core.path.Connection;

/**
 * Builds the parts of {@link org.rds4j.RdsStack#info()}. Every figure is read where its owner keeps it, by the
 * rules of docs/threading.md: a path's on its connection's I/O thread ({@link Connection#info()}), a socket's send budget from its
 * atomics, its receive queue under that queue's lock (a leaf), the congestion monitor's mask and each map under their
 * monitors. The caller holds no lock, so no order is broken; nothing here is on the message path.
 */
public final class Inspection {
    /** Addresses in numeric order, IPv4 before IPv6, so that the output reads the same from one call to the next. */
    static final Comparator<InetAddress> ADDRESS_ORDER = Comparator
            .<InetAddress>comparingInt(a -> a.getAddress().length)
            .thenComparing(InetAddress::getAddress, Arrays::compareUnsigned);

    private Inspection() {
    }

    static List<RdsConnectionInfo> connections(Collection<Connection> connections) {
        List<RdsConnectionInfo> out = new ArrayList<>(connections.size());
        for (Connection c : connections) {
            out.add(c.info());
        }
        out.sort(Comparator.comparing(RdsConnectionInfo::local, ADDRESS_ORDER)
                .thenComparing(RdsConnectionInfo::peer, ADDRESS_ORDER)
                .thenComparing(RdsConnectionInfo::transport));
        return out;
    }

    static List<RdsSocketInfo> sockets(Collection<CoreSocket> sockets) {
        List<RdsSocketInfo> out = new ArrayList<>(sockets.size());
        for (CoreSocket s : sockets) {
            out.add(s.info());
        }
        out.sort(Comparator.comparing((RdsSocketInfo s) -> s.boundAddress() == null)
                .thenComparing(s -> s.boundAddress() == null ? null : s.boundAddress().getAddress(),
                        Comparator.nullsLast(ADDRESS_ORDER))
                .thenComparingInt(s -> s.boundAddress() == null ? 0 : s.boundAddress().getPort()));
        return out;
    }

    /**
     * One socket; the caller passes the socket's parts (see {@link CoreSocket#info()}).
     *
     * @param bound its bound address, or {@code null}
     * @param transport its transport's name
     * @param send its send budget
     * @param receive its receive queue
     * @param monitor its congestion monitor
     * @return the snapshot
     */
    public static RdsSocketInfo socket(InetSocketAddress bound, String transport, SendBuffer send, ReceiveQueue receive,
                                CongestionMonitor monitor) {
        long sentBytes = send.queuedBytes();
        long sentMessages = send.queuedMessages();
        long[] r = receive.census();
        return new RdsSocketInfo(bound, transport, send.budget(), receive.rcvbuf() / 2, sentBytes, sentMessages,
                r[1], (int) r[0], monitor.enabled(), monitor.mask(), r[2] != 0);
    }

    /** The stack's own maps first, then its peers', each in address order. */
    static List<RdsCongestionMapInfo> congestionMaps(Map<InetAddress, CongestionMap> local,
                                                     Map<InetAddress, CongestionMap> peers) {
        List<RdsCongestionMapInfo> out = new ArrayList<>();
        addMaps(out, local, true);
        addMaps(out, peers, false);
        return out;
    }

    private static void addMaps(List<RdsCongestionMapInfo> out, Map<InetAddress, CongestionMap> maps,
                                boolean local) {
        List<InetAddress> addresses = new ArrayList<>(maps.keySet());
        addresses.sort(ADDRESS_ORDER);
        for (InetAddress a : addresses) {
            CongestionMap m = maps.get(a);
            if (m != null) {
                out.add(new RdsCongestionMapInfo(a, local, Arrays.stream(m.congestedPorts()).boxed().toList()));
            }
        }
    }
}
