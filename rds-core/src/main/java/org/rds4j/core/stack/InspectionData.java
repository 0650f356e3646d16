package org.rds4j.core.stack;

import org.rds4j.core.socket.SocketAddresses;

import java.net.InetSocketAddress;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.management.MBeanInfo;
import javax.management.openmbean.ArrayType;
import javax.management.openmbean.CompositeData;
import javax.management.openmbean.CompositeDataSupport;
import javax.management.openmbean.CompositeType;
import javax.management.openmbean.OpenDataException;
import javax.management.openmbean.OpenMBeanAttributeInfo;
import javax.management.openmbean.OpenMBeanAttributeInfoSupport;
import javax.management.openmbean.OpenMBeanConstructorInfo;
import javax.management.openmbean.OpenMBeanInfoSupport;
import javax.management.openmbean.OpenMBeanOperationInfo;
import javax.management.openmbean.OpenType;
import javax.management.openmbean.SimpleType;
import org.rds4j.RdsCongestionMapInfo;
import org.rds4j.RdsConnectionInfo;
import org.rds4j.RdsMemoryInfo;
import org.rds4j.RdsPathInfo;
import org.rds4j.RdsSocketInfo;
import org.rds4j.core.stack.RdsCounters.Counter;

/**
 * The open types of a stack's MBean ({@link StackMBean}) and the conversion of {@link org.rds4j.RdsStackInfo}'s
 * parts into them: addresses become strings in their short form (IPv6 as {@code fd00::2}), a path becomes one row
 * that repeats its connection's fields, so that a table of paths needs no nesting. Sequence numbers are unsigned
 * 64-bit values carried in a {@code long}.
 */
final class InspectionData {
    static final List<String> ATTRIBUTES = List.of("Name", "Generation", "Counters", "CounterNames", "Connections",
            "Sockets", "CongestionMaps", "OffHeap");

    private static final CompositeType COUNTERS;
    private static final CompositeType PATH;
    private static final CompositeType SOCKET;
    private static final CompositeType CONGESTION_MAP;
    private static final CompositeType OFF_HEAP;
    private static final OpenType<?>[] ATTRIBUTE_TYPES;

    static {
        try {
            String[] counterNames = new String[Counter.values().length];
            OpenType<?>[] counterTypes = new OpenType<?>[counterNames.length];
            for (Counter c : Counter.values()) {
                counterNames[c.ordinal()] = c.kernelName();
                counterTypes[c.ordinal()] = SimpleType.LONG;
            }
            COUNTERS = new CompositeType("org.rds4j.Counters", "the stack's counters, by kernel name", counterNames,
                    counterNames, counterTypes);
            PATH = type("org.rds4j.Path", "one path of a connection, with its connection's fields", new Object[][] {
                    {"local", SimpleType.STRING, "our address"},
                    {"peer", SimpleType.STRING, "the peer's address"},
                    {"transport", SimpleType.STRING, "the transport's name"},
                    {"path", SimpleType.INTEGER, "the path's index"},
                    {"state", SimpleType.STRING, "DOWN, CONNECTING, UP or DISCONNECTING"},
                    {"nextTxSequence", SimpleType.LONG, "the next sequence number to send (unsigned)"},
                    {"nextRxSequence", SimpleType.LONG, "the next sequence number expected (unsigned)"},
                    {"queuedMessages", SimpleType.INTEGER, "messages queued, not yet written"},
                    {"queuedBytes", SimpleType.LONG, "their payload bytes"},
                    {"unackedMessages", SimpleType.INTEGER, "messages written, not yet acknowledged"},
                    {"unackedBytes", SimpleType.LONG, "their payload bytes"},
                    {"resets", SimpleType.LONG, "times the path's connection was lost"},
                    {"peerPaths", SimpleType.INTEGER, "the peer's NPATHS as last seen, 0 if none"},
                    {"peerGeneration", SimpleType.LONG, "the peer's GEN_NUM as last seen, 0 if none"},
                    {"transportLocalAddress", SimpleType.STRING, "the transport connection's local address, or ''"},
                    {"transportLocalPort", SimpleType.INTEGER, "its local port, 0 if none"},
                    {"transportRemoteAddress", SimpleType.STRING, "its remote address, or ''"},
                    {"transportRemotePort", SimpleType.INTEGER, "its remote port, 0 if none"}});
            SOCKET = type("org.rds4j.Socket", "one socket", new Object[][] {
                    {"boundAddress", SimpleType.STRING, "the bound address, or '' if unbound"},
                    {"boundPort", SimpleType.INTEGER, "the bound RDS port, 0 if unbound"},
                    {"transport", SimpleType.STRING, "the transport, or ''"},
                    {"sendBudget", SimpleType.LONG, "half of SO_SNDBUF"},
                    {"receiveBudget", SimpleType.LONG, "half of SO_RCVBUF"},
                    {"sendQueuedBytes", SimpleType.LONG, "payload bytes sent, not yet acknowledged"},
                    {"sendQueuedMessages", SimpleType.LONG, "their messages"},
                    {"receiveQueuedBytes", SimpleType.LONG, "payload bytes received, not yet read"},
                    {"receiveQueuedMessages", SimpleType.INTEGER, "their messages"},
                    {"congestionMonitor", SimpleType.BOOLEAN, "whether RDS_CONG_MONITOR is on"},
                    {"congestionMask", SimpleType.LONG, "the monitor's mask, bit port % 64"},
                    {"congested", SimpleType.BOOLEAN, "whether the socket's own port is marked congested"}});
            CONGESTION_MAP = type("org.rds4j.CongestionMap", "one address's congestion map", new Object[][] {
                    {"address", SimpleType.STRING, "the map's address"},
                    {"local", SimpleType.BOOLEAN, "true for an address of this stack, false for a peer's"},
                    {"congestedPorts", ArrayType.getPrimitiveArrayType(int[].class), "the ports marked, ascending"}});
            OFF_HEAP = type("org.rds4j.OffHeap", "the direct memory of the stack's buffers", new Object[][] {
                    {"bound", SimpleType.LONG, "the bound in bytes (offHeapBytes)"},
                    {"inUse", SimpleType.LONG, "bytes taken now: transport pools and large messages' buffers"},
                    {"highWater", SimpleType.LONG, "the most bytes seen taken at once"},
                    {"refusals", SimpleType.LONG, "new peers refused and buffers taken from the heap for the bound"}});
            ATTRIBUTE_TYPES = new OpenType<?>[] {SimpleType.STRING, SimpleType.LONG, COUNTERS,
                    new ArrayType<String>(1, SimpleType.STRING), new ArrayType<CompositeData>(1, PATH), new ArrayType<CompositeData>(1, SOCKET),
                    new ArrayType<CompositeData>(1, CONGESTION_MAP), OFF_HEAP};
        } catch (OpenDataException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private static final String[] DESCRIPTIONS = {
        "the stack's name",
        "the stack's generation number (GEN_NUM), unsigned 32-bit",
        "the counters, by kernel name (rds-info -c)",
        "the counters' names in the kernel's order (a composite's items have none)",
        "one row per path of each connection (rds-info -n, -s, -t, -T)",
        "one row per socket (rds-info -k, -r)",
        "one row per congestion map: the stack's own addresses', then its peers'",
        "the direct memory of the stack's buffers against its bound: bound, inUse, highWater, refusals"};

    private InspectionData() {
    }

    private static CompositeType type(String name, String description, Object[][] items) throws OpenDataException {
        String[] names = new String[items.length];
        String[] descriptions = new String[items.length];
        OpenType<?>[] types = new OpenType<?>[items.length];
        for (int i = 0; i < items.length; i++) {
            names[i] = (String) items[i][0];
            types[i] = (OpenType<?>) items[i][1];
            descriptions[i] = (String) items[i][2];
        }
        return new CompositeType(name, description, names, descriptions, types);
    }

    static CompositeData offHeap(RdsMemoryInfo m) throws OpenDataException {
        return new CompositeDataSupport(OFF_HEAP,
                new String[] {"bound", "inUse", "highWater", "refusals"},
                new Object[] {m.bound(), m.inUse(), m.highWater(), m.refusals()});
    }

    static MBeanInfo mbeanInfo(String className, javax.management.MBeanNotificationInfo[] notifications) {
        OpenMBeanAttributeInfo[] attributes = new OpenMBeanAttributeInfo[ATTRIBUTES.size()];
        for (int i = 0; i < attributes.length; i++) {
            attributes[i] = new OpenMBeanAttributeInfoSupport(ATTRIBUTES.get(i), DESCRIPTIONS[i],
                    ATTRIBUTE_TYPES[i], true, false, false);
        }
        return new OpenMBeanInfoSupport(className, "an rds4j stack: connections, sockets, congestion maps and"
                + " counters, as rds-info shows Linux RDS (docs/inspection.md)", attributes,
                new OpenMBeanConstructorInfo[0], new OpenMBeanOperationInfo[0], notifications);
    }

    private static final String[] PEER_EVENT_ITEMS = {"local", "peer", "transport", "state", "previous", "reason"};
    private static final CompositeType PEER_EVENT = peerEventType();

    private static CompositeType peerEventType() {
        try {
            OpenType<?>[] types = new OpenType<?>[PEER_EVENT_ITEMS.length];
            java.util.Arrays.fill(types, SimpleType.STRING);
            return new CompositeType("RdsPeerEvent", "a peer's state changed", PEER_EVENT_ITEMS,
                    new String[] {"our address", "the peer's address", "the transport", "the new state (UP,"
                            + " UNREACHABLE, REFUSED)", "the state before, empty for the first report",
                            "the cause in words"}, types);
        } catch (OpenDataException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** A peer-state change as a JMX notification's user data: strings only. */
    static CompositeData peerEvent(org.rds4j.RdsPeerEvent e) throws OpenDataException {
        return new CompositeDataSupport(PEER_EVENT, PEER_EVENT_ITEMS, new Object[] {
            org.rds4j.RdsAddresses.format(e.local()), org.rds4j.RdsAddresses.format(e.peer()), e.transport(),
            e.state().name(), e.previous() == null ? "" : e.previous().name(), e.reason()});
    }

    static CompositeData counters(Map<String, Long> counters) throws OpenDataException {
        return new CompositeDataSupport(COUNTERS, counters);
    }

    static String[] counterNames() {
        String[] names = new String[Counter.values().length];
        for (Counter c : Counter.values()) {
            names[c.ordinal()] = c.kernelName();
        }
        return names;
    }

    static CompositeData[] paths(List<RdsConnectionInfo> connections) throws OpenDataException {
        int n = 0;
        for (RdsConnectionInfo c : connections) {
            n += c.paths().size();
        }
        CompositeData[] rows = new CompositeData[n];
        int i = 0;
        for (RdsConnectionInfo c : connections) {
            for (RdsPathInfo p : c.paths()) {
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("local", SocketAddresses.host(c.local()));
                m.put("peer", SocketAddresses.host(c.peer()));
                m.put("transport", c.transport());
                m.put("path", p.index());
                m.put("state", p.state().name());
                m.put("nextTxSequence", p.nextTxSequence());
                m.put("nextRxSequence", p.nextRxSequence());
                m.put("queuedMessages", p.queuedMessages());
                m.put("queuedBytes", p.queuedBytes());
                m.put("unackedMessages", p.unackedMessages());
                m.put("unackedBytes", p.unackedBytes());
                m.put("resets", p.resets());
                m.put("peerPaths", c.peerPaths());
                m.put("peerGeneration", c.peerGeneration());
                putEnd(m, "transportLocal", p.transportLocal());
                putEnd(m, "transportRemote", p.transportRemote());
                rows[i++] = new CompositeDataSupport(PATH, m);
            }
        }
        return rows;
    }

    private static void putEnd(Map<String, Object> m, String prefix, InetSocketAddress a) {
        boolean known = a != null && a.getAddress() != null;
        m.put(prefix + "Address", known ? SocketAddresses.host(a.getAddress()) : "");
        m.put(prefix + "Port", known ? a.getPort() : 0);
    }

    static CompositeData[] sockets(List<RdsSocketInfo> sockets) throws OpenDataException {
        CompositeData[] rows = new CompositeData[sockets.size()];
        for (int i = 0; i < rows.length; i++) {
            RdsSocketInfo s = sockets.get(i);
            Map<String, Object> m = new LinkedHashMap<>();
            InetSocketAddress b = s.boundAddress();
            m.put("boundAddress", b == null ? "" : SocketAddresses.host(b.getAddress()));
            m.put("boundPort", b == null ? 0 : b.getPort());
            m.put("transport", s.transport() == null ? "" : s.transport());
            m.put("sendBudget", s.sendBudget());
            m.put("receiveBudget", s.receiveBudget());
            m.put("sendQueuedBytes", s.sendQueuedBytes());
            m.put("sendQueuedMessages", s.sendQueuedMessages());
            m.put("receiveQueuedBytes", s.receiveQueuedBytes());
            m.put("receiveQueuedMessages", s.receiveQueuedMessages());
            m.put("congestionMonitor", s.congestionMonitor());
            m.put("congestionMask", s.congestionMask());
            m.put("congested", s.congested());
            rows[i] = new CompositeDataSupport(SOCKET, m);
        }
        return rows;
    }

    static CompositeData[] congestionMaps(List<RdsCongestionMapInfo> maps) throws OpenDataException {
        CompositeData[] rows = new CompositeData[maps.size()];
        for (int i = 0; i < rows.length; i++) {
            RdsCongestionMapInfo c = maps.get(i);
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("address", SocketAddresses.host(c.address()));
            m.put("local", c.local());
            m.put("congestedPorts", c.congestedPorts().stream().mapToInt(Integer::intValue).toArray());
            rows[i] = new CompositeDataSupport(CONGESTION_MAP, m);
        }
        return rows;
    }
}
