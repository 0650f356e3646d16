package org.rds4j.tools;

import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.management.JMException;
import javax.management.MBeanServerConnection;
import javax.management.ObjectName;
import javax.management.openmbean.CompositeData;

/**
 * One rds4j stack as its MBean shows it (docs/inspection.md): read once, attribute by attribute, through any
 * {@link MBeanServerConnection}: a remote JVM's, or this JVM's own platform server.
 *
 * @param objectName the MBean's name
 * @param name the stack's name
 * @param counters the counters in the kernel's order
 * @param paths one row per path of each connection, items named as the MBean's {@code Connections}
 * @param sockets one row per socket, as the MBean's {@code Sockets}
 * @param congestionMaps one row per map, as the MBean's {@code CongestionMaps}
 * @param offHeap the MBean's {@code OffHeap}, or {@code null} if the stack does not report it
 */
record StackView(ObjectName objectName, String name, Map<String, Long> counters, List<CompositeData> paths,
                 List<CompositeData> sockets, List<CompositeData> congestionMaps, CompositeData offHeap) {
    /** The pattern every rds4j stack's MBean name matches. */
    static final String PATTERN = "org.rds4j:type=Stack,*";

    /** Every stack of the JVM behind {@code server}, ordered by MBean name. */
    static List<StackView> readAll(MBeanServerConnection server) throws IOException, JMException {
        List<ObjectName> names = new ArrayList<>(server.queryNames(new ObjectName(PATTERN), null));
        names.sort(null);
        List<StackView> stacks = new ArrayList<>();
        for (ObjectName n : names) {
            try {
                stacks.add(read(server, n));
            } catch (javax.management.InstanceNotFoundException closed) {
                // The stack closed between the query and the read: it is gone, show the others.
            }
        }
        return stacks;
    }

    static StackView read(MBeanServerConnection server, ObjectName n) throws IOException, JMException {
        String name = (String) server.getAttribute(n, "Name");
        CompositeData counters = (CompositeData) server.getAttribute(n, "Counters");
        String[] order = (String[]) server.getAttribute(n, "CounterNames");
        Map<String, Long> ordered = new LinkedHashMap<>();
        for (String c : order) {
            if (counters.containsKey(c)) {
                ordered.put(c, ((Number) counters.get(c)).longValue());
            }
        }
        CompositeData offHeap;
        try {
            offHeap = (CompositeData) server.getAttribute(n, "OffHeap");
        } catch (javax.management.AttributeNotFoundException older) {
            offHeap = null;                          // a stack from before the off-heap figures
        }
        return new StackView(n, name, ordered, rows(server, n, "Connections"), rows(server, n, "Sockets"),
                rows(server, n, "CongestionMaps"), offHeap);
    }

    private static List<CompositeData> rows(MBeanServerConnection server, ObjectName n, String attribute)
            throws IOException, JMException {
        return List.of((CompositeData[]) server.getAttribute(n, attribute));
    }
}
