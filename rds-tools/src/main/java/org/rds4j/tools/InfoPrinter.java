package org.rds4j.tools;

import java.io.PrintStream;
import java.util.Arrays;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;
import javax.management.openmbean.CompositeData;

/**
 * Prints a stack's sources as the kernel's {@code rds-info} prints them: the same titles, column names and widths
 * where rds4j has the same figure, rds4j's own columns after them. Addresses are as the MBean gives them (IPv6 in
 * its short form); a wider address widens its column rather than being cut.
 */
final class InfoPrinter {
    private final PrintStream out;

    InfoPrinter(PrintStream out) {
        this.out = out;
    }

    /** {@code -c}: rds-info's "Counters:" table, in the kernel's order. */
    void counters(Map<String, Long> counters) {
        out.printf(Locale.ROOT, "%nCounters:%n%25s %16s%n", "CounterName", "Value");
        for (Map.Entry<String, Long> e : counters.entrySet()) {
            out.printf(Locale.ROOT, "%25s %16d%n", e.getKey(), e.getValue());
        }
    }

    /**
     * {@code -m}: rds4j's own: the direct memory of the stack's buffers against its bound (RdsMemoryInfo), or a line
     * saying the stack does not report it (an rds4j older than the figures).
     */
    void offHeap(CompositeData m) {
        out.printf(Locale.ROOT, "%nOff-heap memory:%n");
        if (m == null) {
            out.printf(Locale.ROOT, "  not reported by this stack%n");
            return;
        }
        out.printf(Locale.ROOT, "%16s %16s %16s %10s%n", "InUse", "HighWater", "Bound", "Refusals");
        out.printf(Locale.ROOT, "%16d %16d %16d %10d%n", (Long) m.get("inUse"), (Long) m.get("highWater"),
                (Long) m.get("bound"), (Long) m.get("refusals"));
    }

    /**
     * {@code -k}: rds-info's "RDS Sockets:" with BoundAddr, BPort, SndBuf and RcvBuf (the budgets: half of
     * SO_SNDBUF and SO_RCVBUF, as the kernel reports them); rds4j sockets never connect, so ConnAddr and CPort are
     * left out, and have no inode. Then the bytes queued each way and the congestion columns.
     */
    void sockets(Iterable<CompositeData> sockets) {
        out.printf(Locale.ROOT, "%nRDS Sockets:%n%15s %5s %10s %10s %10s %10s %9s %4s %18s%n", "BoundAddr", "BPort",
                "SndBuf", "RcvBuf", "SndQueued", "RcvQueued", "Transport", "Cong", "CongMonitor");
        for (CompositeData s : sockets) {
            String bound = (String) s.get("boundAddress");
            boolean monitor = (Boolean) s.get("congestionMonitor");
            out.printf(Locale.ROOT, "%15s %5d %10d %10d %10d %10d %9s %4s %18s%n",
                    bound.isEmpty() ? "unbound" : bound, s.get("boundPort"), s.get("sendBudget"),
                    s.get("receiveBudget"), s.get("sendQueuedBytes"), s.get("receiveQueuedBytes"),
                    dash((String) s.get("transport")), (Boolean) s.get("congested") ? "yes" : "no",
                    monitor ? String.format(Locale.ROOT, "0x%016x", (Long) s.get("congestionMask")) : "off");
        }
    }

    /**
     * {@code -n}: rds-info's "RDS Connections:" one line per path, LocalAddr, RemoteAddr, NextTX, NextRX and the
     * flags {@code s} (messages wait to be written), {@code c} (connecting), {@code C} (connected); then the
     * transport, the path's index, its resets, and the peer's NPATHS and GEN_NUM as last seen.
     */
    void connections(Iterable<CompositeData> paths) {
        out.printf(Locale.ROOT, "%nRDS Connections:%n%15s %15s %16s %16s %3s %9s %4s %6s %6s %10s%n", "LocalAddr",
                "RemoteAddr", "NextTX", "NextRX", "Flg", "Transport", "Path", "Resets", "NPaths", "PeerGen");
        for (CompositeData p : paths) {
            String state = (String) p.get("state");
            String flags = ((Integer) p.get("queuedMessages") > 0 ? "s" : "-")
                    + (state.equals("CONNECTING") ? "c" : "-") + (state.equals("UP") ? "C" : "-");
            out.printf(Locale.ROOT, "%15s %15s %16s %16s %3s %9s %4d %6d %6d %10d%n", p.get("local"), p.get("peer"),
                    Long.toUnsignedString((Long) p.get("nextTxSequence")),
                    Long.toUnsignedString((Long) p.get("nextRxSequence")), flags, p.get("transport"),
                    p.get("path"), p.get("resets"), p.get("peerPaths"), p.get("peerGeneration"));
        }
    }

    /**
     * {@code -s} and {@code -t}: rds-info lists each message of the send or retransmit queue; rds4j gives each
     * path's count and bytes (the messages themselves are not copied out of the path).
     */
    void queue(String title, String messagesItem, String bytesItem, Iterable<CompositeData> paths) {
        out.printf(Locale.ROOT, "%n%s Message Queue:%n%15s %15s %9s %4s %10s %10s%n", title, "LocalAddr",
                "RemoteAddr", "Transport", "Path", "Messages", "Bytes");
        for (CompositeData p : paths) {
            out.printf(Locale.ROOT, "%15s %15s %9s %4d %10d %10d%n", p.get("local"), p.get("peer"),
                    p.get("transport"), p.get("path"), p.get(messagesItem), p.get(bytesItem));
        }
    }

    /** {@code -r}: the receive queue of each socket, as counts and bytes (rds-info lists each message). */
    void receiveQueue(Iterable<CompositeData> sockets) {
        out.printf(Locale.ROOT, "%nReceive Message Queue:%n%15s %5s %10s %10s%n", "LocalAddr", "LPort", "Messages",
                "Bytes");
        for (CompositeData s : sockets) {
            String bound = (String) s.get("boundAddress");
            out.printf(Locale.ROOT, "%15s %5d %10d %10d%n", bound.isEmpty() ? "unbound" : bound, s.get("boundPort"),
                    s.get("receiveQueuedMessages"), s.get("receiveQueuedBytes"));
        }
    }

    /**
     * {@code -T}: rds-info's "TCP Connections:", the TCP connection under each path that has one: its two ends,
     * then the path and its state. The kernel's HdrRemain, DataRemain, SentNxt, ExpectUna and SeenUna are TCP socket
     * internals rds4j does not see (Netty owns the socket).
     */
    void tcp(Iterable<CompositeData> paths) {
        out.printf(Locale.ROOT, "%nTCP Connections:%n%15s %5s %15s %5s %4s %13s%n", "LocalAddr", "LPort",
                "RemoteAddr", "RPort", "Path", "State");
        for (CompositeData p : paths) {
            if (!"tcp".equals(p.get("transport")) || ((String) p.get("transportLocalAddress")).isEmpty()) {
                continue;
            }
            out.printf(Locale.ROOT, "%15s %5d %15s %5d %4d %13s%n", p.get("transportLocalAddress"),
                    p.get("transportLocalPort"), p.get("transportRemoteAddress"), p.get("transportRemotePort"),
                    p.get("path"), p.get("state"));
        }
    }

    /** {@code -I}: rds-info's "RDS IB Connections:", which rds4j never has. */
    void infiniband() {
        out.printf(Locale.ROOT, "%nRDS IB Connections:%n  none: rds4j has no InfiniBand transport (RDS over TCP"
                + " only)%n");
    }

    /** {@code -g} (rds4j's own): each congestion map and the ports it marks. */
    void congestionMaps(Iterable<CompositeData> maps) {
        out.printf(Locale.ROOT, "%nCongestion Maps:%n%15s %5s %s%n", "Address", "Owner", "CongestedPorts");
        for (CompositeData m : maps) {
            int[] ports = (int[]) m.get("congestedPorts");
            out.printf(Locale.ROOT, "%15s %5s %s%n", m.get("address"), (Boolean) m.get("local") ? "local" : "peer",
                    ports.length == 0 ? "-" : Arrays.stream(ports).mapToObj(Integer::toString)
                            .collect(Collectors.joining(",")));
        }
    }

    private static String dash(String s) {
        return s == null || s.isEmpty() ? "-" : s;
    }
}
