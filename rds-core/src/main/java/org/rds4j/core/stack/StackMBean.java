package org.rds4j.core.stack;

import java.lang.management.ManagementFactory;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Pattern;
import javax.management.Attribute;
import javax.management.AttributeList;
import javax.management.AttributeNotFoundException;
import javax.management.DynamicMBean;
import javax.management.InstanceAlreadyExistsException;
import javax.management.InstanceNotFoundException;
import javax.management.JMException;
import javax.management.MBeanException;
import javax.management.MBeanInfo;
import javax.management.MBeanNotificationInfo;
import javax.management.MBeanServer;
import javax.management.Notification;
import javax.management.NotificationBroadcasterSupport;
import javax.management.ObjectName;
import javax.management.ReflectionException;
import javax.management.openmbean.OpenDataException;
import org.rds4j.RdsAddresses;
import org.rds4j.RdsPeerEvent;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A stack's JMX face: one MBean per stack, {@code org.rds4j:type=Stack,name=NAME}, whose attributes are
 * {@link CoreStack#info()}'s parts as open data (strings, numbers, {@code CompositeData}), so any JMX client reads
 * them without rds4j's classes. docs/inspection.md lists every attribute. Each read takes a fresh snapshot of the
 * part asked for; nothing is kept or updated between reads.
 */
final class StackMBean extends NotificationBroadcasterSupport implements DynamicMBean {
    private static final Logger log = LoggerFactory.getLogger(StackMBean.class);

    /** The JMX domain of every rds4j MBean. */
    static final String DOMAIN = "org.rds4j";
    /** Characters an ObjectName value may hold unquoted. */
    private static final Pattern PLAIN = Pattern.compile("[A-Za-z0-9._@#+-]+");
    /** Stacks of one JVM may share a name; later ones get "-2", "-3", ... up to this. */
    private static final int MAX_SUFFIX = 1000;

    /** The type of the notification sent when a peer's state changes; the new state is its user data's "state". */
    static final String PEER_STATE = "org.rds4j.peer.state";

    private final CoreStack stack;
    private final AtomicLong sequence = new AtomicLong();

    private StackMBean(CoreStack stack) {
        super(new MBeanNotificationInfo(new String[] {PEER_STATE}, Notification.class.getName(),
                "a peer became UNREACHABLE, REFUSED this host, or came back UP; the user data holds local, peer,"
                        + " transport, state, previous and reason"));
        this.stack = stack;
    }

    /** Sends {@code e} as a {@link #PEER_STATE} notification; on the stack's event thread. */
    private void peerStateChanged(RdsPeerEvent e) {
        Notification n = new Notification(PEER_STATE, this, sequence.incrementAndGet(),
                RdsAddresses.format(e.peer()) + " " + e.state() + ": " + e.reason());
        try {
            n.setUserData(InspectionData.peerEvent(e));
        } catch (OpenDataException ex) {
            log.debug("peer event without user data: {}", ex.toString());
        }
        sendNotification(n);
    }

    /**
     * Registers {@code stack}'s MBean on the platform MBean server.
     *
     * @return its name, or {@code null} if it could not be registered (logged; the stack works without it)
     */
    static ObjectName register(CoreStack stack, PeerEvents events) {
        MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        String base = stack.config().name();
        for (int i = 1; i <= MAX_SUFFIX; i++) {
            try {
                ObjectName name = objectName(i == 1 ? base : base + "-" + i);
                StackMBean bean = new StackMBean(stack);
                server.registerMBean(bean, name);
                events.jmx(bean::peerStateChanged);
                log.debug("stack {} registered as {}", base, name);
                return name;
            } catch (InstanceAlreadyExistsException taken) {
                // Another stack of this JVM has the name: try the next suffix.
            } catch (JMException | RuntimeException e) {
                log.warn("stack {}: cannot register its JMX MBean ({}); ./rds4j info and JMX clients will not see"
                        + " it", base, e.toString());
                return null;
            }
        }
        log.warn("stack {}: {} stacks of this JVM already use the name; no JMX MBean for this one", base,
                MAX_SUFFIX);
        return null;
    }

    static void unregister(ObjectName name) {
        try {
            ManagementFactory.getPlatformMBeanServer().unregisterMBean(name);
        } catch (InstanceNotFoundException gone) {
            // Someone unregistered it already: nothing to do.
        } catch (JMException | RuntimeException e) {
            log.warn("cannot unregister {}: {}", name, e.toString());
        }
    }

    /** {@code org.rds4j:type=Stack,name=NAME}, the name quoted if it holds characters ObjectName reserves. */
    static ObjectName objectName(String stackName) throws JMException {
        String value = PLAIN.matcher(stackName).matches() ? stackName : ObjectName.quote(stackName);
        return new ObjectName(DOMAIN + ":type=Stack,name=" + value);
    }

    @Override
    public Object getAttribute(String attribute) throws AttributeNotFoundException, MBeanException {
        try {
            switch (attribute) {
                case "Name":
                    return stack.config().name();
                case "Generation":
                    return stack.generation();
                case "Counters":
                    return InspectionData.counters(stack.counters());
                case "CounterNames":
                    return InspectionData.counterNames();
                case "Connections":
                    return InspectionData.paths(stack.connectionInfos());
                case "Sockets":
                    return InspectionData.sockets(stack.socketInfos());
                case "CongestionMaps":
                    return InspectionData.congestionMaps(stack.congestionInfos());
                case "OffHeap":
                    return InspectionData.offHeap(stack.offHeap().info());
                default:
                    throw new AttributeNotFoundException("no attribute " + attribute + " in an rds4j stack's MBean;"
                            + " its attributes are " + InspectionData.ATTRIBUTES);
            }
        } catch (OpenDataException e) {
            throw new MBeanException(e, "cannot describe " + attribute + " as open data");
        }
    }

    @Override
    public AttributeList getAttributes(String[] attributes) {
        AttributeList list = new AttributeList();
        for (String a : attributes) {
            try {
                list.add(new Attribute(a, getAttribute(a)));
            } catch (JMException e) {
                log.debug("attribute {} left out: {}", a, e.toString());
            }
        }
        return list;
    }

    @Override
    public void setAttribute(Attribute attribute) throws AttributeNotFoundException {
        throw new AttributeNotFoundException("the attributes of an rds4j stack are read-only: " + attribute.getName());
    }

    @Override
    public AttributeList setAttributes(AttributeList attributes) {
        return new AttributeList();
    }

    @Override
    public Object invoke(String actionName, Object[] params, String[] signature) throws ReflectionException {
        throw new ReflectionException(new NoSuchMethodException(actionName),
                "an rds4j stack's MBean has no operations; read its attributes " + InspectionData.ATTRIBUTES);
    }

    @Override
    public MBeanInfo getMBeanInfo() {
        return InspectionData.mbeanInfo(StackMBean.class.getName(), getNotificationInfo());
    }

    /** The attribute names, in the order docs/inspection.md lists them. */
    static List<String> attributes() {
        return InspectionData.ATTRIBUTES;
    }
}
