package org.rds4j.core.stack;

import org.rds4j.core.socket.CoreSelector;
import org.rds4j.core.socket.CoreSocket;
import org.rds4j.core.socket.SocketAddresses;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.time.Instant;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.ServiceLoader;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import javax.management.ObjectName;
import org.rds4j.EaccesException;
import org.rds4j.EbadfException;
import org.rds4j.EnoprotooptException;
import org.rds4j.RdsAddresses;
import org.rds4j.RdsCongestionMapInfo;
import org.rds4j.RdsConnectionInfo;
import org.rds4j.RdsSelector;
import org.rds4j.RdsSocket;
import org.rds4j.RdsSocketInfo;
import org.rds4j.RdsPeerEvent;
import org.rds4j.RdsPeerState;
import org.rds4j.RdsPeerStateListener;
import org.rds4j.RdsStack;
import org.rds4j.RdsStackConfig;
import org.rds4j.RdsStackInfo;
import org.rds4j.core.spi.OffHeapMemory;
import org.rds4j.core.stack.RdsCounters.Counter;
import org.rds4j.core.cong.CongestionMap;
import org.rds4j.core.path.Addresses;
import org.rds4j.core.path.Arrival;
import org.rds4j.core.path.Connection;
import org.rds4j.core.path.ConnectionEnvironment;
import org.rds4j.core.path.MessageReceiver;
import org.rds4j.core.path.StackReceiveBudget;
import org.rds4j.core.spi.ConnectionHandler;
import org.rds4j.core.spi.RdsTransport;
import org.rds4j.core.spi.TransportConnection;
import org.rds4j.core.util.SnapshotSet;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One RDS host: sockets, the bind table, connections to peers, congestion maps, transports and the timer thread.
 *
 * <p>Threads: a stack owns one timer thread (reconnect delays); each transport owns its I/O threads; sockets are
 * used by application threads. No thread of its own touches messages.
 */
public final class CoreStack implements RdsStack, ConnectionEnvironment {
    private static final Logger log = LoggerFactory.getLogger(CoreStack.class);

    /** RDS_MAX_MSG_SIZE: the largest payload a socket may send, and the largest a peer may send us. */
    public static final int MAX_MESSAGE_SIZE = 1 << 20;

    private final RdsStackConfig config;
    private final Map<String, TransportBinding> transports;
    private final String defaultTransport;
    private final BindTable bindTable = new BindTable();
    private final ConnectionTable connections = new ConnectionTable();
    private final Map<InetAddress, CongestionMap> localMaps = new ConcurrentHashMap<>();
    private final PeerAdmission admission;
    private final StackReceiveBudget receiveBudget;
    private final OffHeapMemory offHeap;
    private final SnapshotSet<CoreSocket> sockets = new SnapshotSet<>(CoreSocket[]::new);
    private final RdsCounters counters = new RdsCounters();
    private final ScheduledThreadPoolExecutor scheduler;
    private final Map<InetAddress, int[]> ackPorts = new ConcurrentHashMap<>();
    /** GEN_NUM: a peer that sees it change knows this host restarted. */
    private final long generation = 1 + (ThreadLocalRandom.current().nextLong() & 0xFFFF_FFFEL);
    private volatile boolean closing;
    private final PeerEvents peerEvents;
    /** The stack's JMX MBean, null if JMX is off or registering failed. */
    private final ObjectName mbean;

    /**
     * A stack with the transports found on the class path and its timer thread started; no socket, listener or
     * connection yet.
     *
     * @param config the stack's settings
     */
    public CoreStack(RdsStackConfig config) {
        this.config = Objects.requireNonNull(config, "config is null: pass a configuration, such as"
                + " RdsStackConfig.builder().build()");
        this.transports = new ConcurrentHashMap<>();
        List<RdsTransport> found = new ArrayList<>();
        for (RdsTransport t : ServiceLoader.load(RdsTransport.class, CoreStack.class.getClassLoader())) {
            found.add(t);
            transports.putIfAbsent(t.name(), new TransportBinding(this, t));
        }
        // Checked here, before any thread starts: a misspelt name fails at create, not at the first bind.
        if (config.defaultTransport() != null && !transports.containsKey(config.defaultTransport())) {
            throw new IllegalArgumentException("stack " + config.name() + ": no RDS transport named '"
                    + config.defaultTransport() + "' is installed (installed: " + new TreeSet<>(transports.keySet())
                    + "); pass one of those to defaultTransport, or null for the default, or add the transport's"
                    + " module (such as rds-transport-tcp) to the class or module path");
        }
        this.defaultTransport = config.defaultTransport() != null ? config.defaultTransport()
                : found.stream().max(Comparator.comparingInt(RdsTransport::defaultPriority))
                        .map(RdsTransport::name).orElse(null);
        this.scheduler = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "rds4j-" + config.name() + "-timer");
            t.setDaemon(true);
            return t;
        });
        scheduler.setRemoveOnCancelPolicy(true);
        this.offHeap = new OffHeapMemory(config.offHeapBytes());
        this.admission = new PeerAdmission(this, connections, config, offHeap);
        this.receiveBudget = new StackReceiveBudget(config.stackReceiveBytes());
        scheduler.scheduleWithFixedDelay(admission::reclaimIdle, 1, 1, TimeUnit.SECONDS);
        this.peerEvents = new PeerEvents(config.name());
        // Last: the MBean may be read from another thread as soon as it is registered.
        this.mbean = config.jmx() ? StackMBean.register(this, peerEvents) : null;
        log.debug("stack {} created with transports {} (default {})", config.name(), transports.keySet(),
                defaultTransport);
    }

    @Override
    public RdsSocket openSocket() throws IOException {
        if (closing) {
            throw new EbadfException("stack " + config.name() + " is closed; open sockets on a stack that is open, or"
                    + " create a new one");
        }
        CoreSocket s = new CoreSocket(this);
        sockets.add(s);
        return s;
    }

    @Override
    public RdsSelector openSelector() {
        return new CoreSelector(this);
    }

    @Override
    public RdsStackConfig config() {
        return config;
    }

    @Override
    public Map<String, Long> counters() {
        return counters.snapshot();
    }

    @Override
    public RdsStackInfo info() {
        Instant takenAt = Instant.now();
        return new RdsStackInfo(config.name(), generation, takenAt, connectionInfos(), socketInfos(),
                congestionInfos(), counters(), offHeap.info());
    }

    /**
     * The stack's account of direct memory.
     *
     * @return the account against {@link RdsStackConfig#offHeapBytes()}
     */
    public OffHeapMemory offHeap() {
        return offHeap;
    }

    /** The connections and their paths, each read on its I/O thread (docs/inspection.md). */
    List<RdsConnectionInfo> connectionInfos() {
        return Inspection.connections(connections.all());
    }

    List<RdsSocketInfo> socketInfos() {
        return Inspection.sockets(Arrays.asList(sockets.members()));
    }

    List<RdsCongestionMapInfo> congestionInfos() {
        return Inspection.congestionMaps(localMaps, connections.peerMaps());
    }

    /**
     * The name of this stack's JMX MBean.
     *
     * @return the name, or {@code null} if JMX is off ({@link RdsStackConfig#jmx()}) or the MBean could not be
     *         registered
     */
    public ObjectName mbeanName() {
        return mbean;
    }

    @Override
    public RdsCounters statistics() {
        return counters;
    }

    @Override
    public boolean busyPoll() {
        return config.busyPoll();
    }

    // ------------------------------------------------------------------------------------------------ sockets

    /**
     * The transport a socket uses when it chose none.
     *
     * @return its name, or {@code null} if no transport is installed
     */
    public String defaultTransport() {
        return defaultTransport;
    }

    /**
     * An installed transport.
     *
     * @param name its name, such as {@code tcp}
     * @return the stack's binding of it
     * @throws EnoprotooptException no transport of that name is installed
     */
    public TransportBinding transport(String name) throws EnoprotooptException {
        TransportBinding b = name == null ? null : transports.get(name);
        if (b == null) {
            throw new EnoprotooptException("no RDS transport named '" + name + "' is installed (installed: "
                    + transports.keySet() + "); add its module, such as rds-transport-tcp, to the class path");
        }
        return b;
    }

    /**
     * Whether a transport is installed.
     *
     * @param name its name
     * @return true if sockets may choose it
     */
    public boolean hasTransport(String name) {
        return transports.containsKey(name);
    }

    /**
     * The stack's bound addresses and ports.
     *
     * @return the bind table
     */
    public BindTable bindTable() {
        return bindTable;
    }

    /**
     * A socket closed: the stack forgets it.
     *
     * @param s the socket
     */
    public void socketClosed(CoreSocket s) {
        sockets.remove(s);
    }

    /**
     * Whether {@code address} is this host's own: a socket of this stack is bound there.
     *
     * @param address an address
     * @return true if a socket of this stack is bound there
     */
    public boolean isLocal(InetAddress address) {
        return bindTable.hasAddress(address);
    }

    /**
     * The connection to a peer over a transport if there is one; never creates one.
     *
     * @param local our address
     * @param peer the peer's address
     * @param transport the transport
     * @return the connection, or {@code null}
     */
    public Connection existingConnection(InetAddress local, InetAddress peer, TransportBinding transport) {
        return transport == null ? null : connections.get(local, peer, transport.name());
    }

    /**
     * The connection to a peer over a transport, created on first use (on first send or first accept).
     *
     * @param local our address
     * @param peer the peer's address
     * @param transport the transport
     * @return the connection
     * @throws IOException the transport cannot be started
     * @throws EaccesException if the peer is outside the allowed peers
     */
    public Connection connection(InetAddress local, InetAddress peer, TransportBinding transport) throws IOException {
        Connection c = connections.get(local, peer, transport.name());
        if (c != null && !c.isRetired()) {
            return c;
        }
        if (!admission.allows(peer)) {
            throw new EaccesException(RdsAddresses.format(peer) + " is not among this stack's allowedPeers "
                    + config.allowedPeers() + "; add a prefix that covers it to RdsStackConfig.allowPeers");
        }
        return connections.getOrCreate(local, peer, transport, this);   // waits for a connection being forgotten
    }

    /**
     * The connections from {@code local} over {@code transport}, by peer address. A socket keeps this map from bind
     * on, so a send finds its connection with one lookup that allocates nothing.
     *
     * @param local the socket's bound address
     * @param transport the socket's transport
     * @return a live map, peer address to connection
     */
    public Map<InetAddress, Connection> peerTable(InetAddress local, TransportBinding transport) {
        return connections.peerTable(local, transport.name());
    }

    /**
     * The kernel's accept rule. A connection from a larger address than ours is refused, and we connect to it
     * instead (it was poking us because it has something to send); one from a smaller address is taken by the
     * path if it is free.
     */
    ConnectionHandler accept(TransportBinding transport, TransportConnection tc) {
        if (closing) {
            return null;
        }
        InetAddress local = Addresses.normalize(tc.localAddress().getAddress());
        InetAddress peer = Addresses.normalize(tc.remoteAddress().getAddress());
        if (isLocal(peer) && !peer.equals(local)) {
            log.debug("refusing a connection from {}, an address of this host", peer);
            return null;
        }
        Connection known = existingConnection(local, peer, transport);
        if (!admission.admits(peer, known != null && !known.isRetired(), connections.size())) {
            return null;                             // before anything is kept for the peer
        }
        try {
            Connection c = connection(local, peer, transport);
            log.debug("{}: incoming connection {}", c, tc);
            if (!Addresses.initiates(peer, local)) {
                log.debug("{}: the larger address connected; connecting back", c);
                c.peerPoked();
                return null;
            }
            ConnectionHandler h = c.accept(tc);
            if (h == null && c.isRetired()) {
                h = connection(local, peer, transport).accept(tc);   // forgotten meanwhile: a fresh one takes it
            }
            return h;
        } catch (IOException e) {
            log.warn("cannot accept a connection from {}: {}", peer, e.toString());
            return null;
        }
    }

    /** The allow-list alone, before a transport's costly work on a new connection (see TransportHost#admits). */
    boolean admitsEarly(InetAddress peer) {
        return closing || admission.admits(Addresses.normalize(peer), true, 0);
    }

    // ------------------------------------------------------------------------------------------------ congestion

    /**
     * A socket's receive queue crossed its limit: set or clear its port's bit. Called under the socket's lock, so the
     * bit always agrees with the socket's own view (the kernel does the same under its receive lock); the map's
     * monitor is taken inside, and the map never calls out.
     *
     * @param local the socket's bound address
     * @param port the socket's RDS port
     * @param congested whether to set the bit (true) or clear it
     * @return whether the bit changed: then call {@link #sendCongestionUpdates} once the socket lock is released
     */
    public boolean markPort(InetAddress local, int port, boolean congested) {
        CongestionMap map = localMap(local);
        return congested ? map.set(port) : map.clear(port);
    }

    /**
     * Queues the local address's current map on every connection from it (each path copies it when it writes).
     *
     * @param local the address whose map changed
     */
    public void sendCongestionUpdates(InetAddress local) {
        for (Connection c : connections.snapshot()) {     // no iterator: this may run for every message
            if (c.local().equals(local)) {
                c.queueCongestionUpdate();
            }
        }
    }

    /** The congestion map of a peer address, shared by all connections to it. */
    CongestionMap peerMap(InetAddress peer) {
        return connections.peerMap(peer);
    }

    // ------------------------------------------------------------------------------------------------ environment

    @Override
    public ScheduledExecutorService scheduler() {
        return scheduler;
    }

    @Override
    public CongestionMap localMap(InetAddress local) {
        return localMaps.computeIfAbsent(local, a -> new CongestionMap());
    }

    @Override
    public MessageReceiver receiver(InetAddress local, int port) {
        return bindTable.lookup(local, port);
    }

    /**
     * A send to an address of this same stack needs no transport, as with the kernel's loopback transport: the
     * message is queued on the destination socket at once, and a ping is answered at once.
     *
     * @param payload the message
     * @param from the sending socket's address
     * @param to the destination address, one of this stack's
     * @param dport the destination RDS port
     * @return the payload's length (all of it is consumed)
     */
    public int sendLocal(ByteBuffer payload, InetSocketAddress from, InetAddress to, int dport) {
        int len = payload.remaining();
        counters.increment(Counter.SEND_QUEUED);
        if (dport == 0) {
            counters.increment(Counter.RECV_PING);
            counters.increment(Counter.SEND_PONG);
            deliver(from.getAddress(), from.getPort(), new InetSocketAddress(to, 0), ByteBuffer.allocate(0));
        } else if (!deliver(to, dport, from, payload.duplicate())) {
            counters.increment(Counter.RECV_DROP_NO_SOCK);
        }
        payload.position(payload.limit());
        return len;
    }

    /**
     * Queues a copy of {@code payload} on the socket bound at {@code local:port}, as one arrival: for messages
     * between sockets of this stack, which need no transport.
     *
     * @return false if no socket is bound there
     */
    boolean deliver(InetAddress local, int port, InetSocketAddress source, ByteBuffer payload) {
        CoreSocket s = bindTable.lookup(local, port);
        if (s == null) {
            return false;
        }
        Arrival a = s.claim(payload.remaining(), 0, false);
        a.payload().put(0, payload, payload.position(), payload.remaining());
        a.set(source, null, port, System.nanoTime());   // from this stack: no peer's bound answers for it
        s.deliver(a, a, 1, a.length());
        return true;
    }

    @Override
    public long random(long bound) {
        return ThreadLocalRandom.current().nextLong(bound);
    }

    @Override
    public long reconnectMinNanos() {
        return config.reconnectMinDelay().toNanos();
    }

    @Override
    public long reconnectMaxNanos() {
        return config.reconnectMaxDelay().toNanos();
    }

    /** Ports per local address for acknowledgement pings: enough for one per round trip with room to spare. */
    private static final int ACK_PORTS = 4;

    @Override
    public int[] ackPorts(InetAddress local, int atLeast) {
        return ackPorts.compute(local, (a, have) -> {
            int n = Math.max(atLeast, ACK_PORTS);
            if (have != null && have.length >= n) {
                return have;
            }
            int[] ports = have == null ? new int[n] : Arrays.copyOf(have, n);
            try {
                for (int i = have == null ? 0 : have.length; i < n; i++) {
                    ports[i] = bindTable.bind(a, 0, BindTable.RESERVED,
                            bound -> ThreadLocalRandom.current().nextInt(bound));
                }
            } catch (IOException e) {
                throw new IllegalStateException("no free RDS port on " + SocketAddresses.host(a) + " for the stack's"
                        + " acknowledgement pings", e);
            }
            return ports;
        });
    }

    @Override
    public boolean isAckPort(InetAddress local, int port) {
        return bindTable.isReserved(local, port);
    }

    @Override
    public long nanoTime() {
        return System.nanoTime();
    }

    @Override
    public void peerCongestionUpdated(InetAddress peer) {
        for (CoreSocket s : sockets.members()) {          // no iterator: this may run for every message
            if (s.monitorsCongestion()) {
                s.peerCongestionUpdated();
            }
        }
    }

    @Override
    public long generation() {
        return generation;
    }

    @Override
    public int paths() {
        return config.paths();
    }

    @Override
    public long livenessNanos() {
        return config.livenessInterval().toNanos();
    }

    @Override
    public long maxPayload() {
        return MAX_MESSAGE_SIZE;
    }

    @Override
    public long peerReceiveBytes() {
        return config.peerReceiveBytes();
    }

    @Override
    public StackReceiveBudget stackReceiveBudget() {
        return receiveBudget;
    }

    @Override
    public long frameTimeoutNanos() {
        return config.frameTimeout().toNanos();
    }

    @Override
    public int peerFailureThreshold() {
        return config.peerFailureThreshold();
    }

    @Override
    public long unreachableTimeoutNanos() {
        return config.unreachableTimeout().toNanos();
    }

    @Override
    public void peerStateChanged(Connection connection, RdsPeerState state, RdsPeerState previous, String reason) {
        peerEvents.publish(new RdsPeerEvent(connection.local(), connection.peer(), connection.transportName(), state,
                previous, reason));
    }

    @Override
    public void addPeerStateListener(RdsPeerStateListener listener) {
        peerEvents.add(listener);
    }

    @Override
    public void removePeerStateListener(RdsPeerStateListener listener) {
        peerEvents.remove(Objects.requireNonNull(listener,
                "listener is null: pass the RdsPeerStateListener given to addPeerStateListener"));
    }

    @Override
    public boolean isClosing() {
        return closing;
    }

    // ------------------------------------------------------------------------------------------------ closing

    @Override
    public void close() {
        synchronized (this) {
            if (closing) {
                return;
            }
            closing = true;
        }
        if (mbean != null) {
            StackMBean.unregister(mbean);
        }
        for (CoreSocket s : sockets.members()) {
            s.close();
        }
        for (Connection c : connections.all()) {
            c.shutdown();
        }
        for (TransportBinding t : transports.values()) {
            t.close();
        }
        scheduler.shutdownNow();
        peerEvents.close();
        try {
            scheduler.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        log.debug("stack {} closed", config.name());
    }

    /**
     * Connections of this stack, for tools and tests.
     *
     * @return a copy of the current connections, one per local address, peer and transport
     */
    public List<Connection> connections() {
        return new ArrayList<>(connections.all());
    }

    @Override
    public String toString() {
        return "RdsStack[" + config.name() + "]";
    }
}
