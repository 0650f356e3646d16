package org.rds4j.micrometer;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.BaseUnits;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.ToDoubleFunction;
import org.rds4j.RdsAddresses;
import org.rds4j.RdsConnectionInfo;
import org.rds4j.RdsPathInfo;
import org.rds4j.RdsSocketInfo;
import org.rds4j.RdsStack;
import org.rds4j.RdsStackInfo;

/**
 * Micrometer meters for one {@link RdsStack}, read from {@link RdsStack#info()}, named and typed as Micrometer
 * expects: dotted lower-case names, the unit as the meter's base unit (never in the name), function counters for
 * what only grows, and tags of bounded cardinality (docs/inspection.md lists every meter):
 *
 * <ul>
 *   <li>one function counter per kernel counter, its name with dots for underscores and any {@code bytes} moved to
 *       the base unit ({@code rds.recv.queued}, {@code rds.conn.reset}, {@code rds.recv.added.to.sock} in bytes);</li>
 *   <li>{@code rds.connections} and {@code rds.sockets}, how many the stack has;</li>
 *   <li>per connection (a peer over a transport), tagged {@code local}, {@code peer} and {@code transport}, its paths
 *       added up: {@code rds.path.up} (paths connected), {@code rds.path.queued} and {@code rds.path.unacked}
 *       (messages), {@code rds.path.queued.payload} and {@code rds.path.unacked.payload} (bytes), and the function
 *       counter {@code rds.path.resets};</li>
 *   <li>per bound address, tagged {@code address}, its sockets added up: {@code rds.socket.bound} (sockets),
 *       {@code rds.socket.send.queued} and {@code rds.socket.receive.queued} (bytes),
 *       {@code rds.socket.receive.messages} (messages) and {@code rds.socket.congested} (sockets whose port is
 *       marked congested).</li>
 * </ul>
 *
 * <p>No meter is tagged with a port or a path index: sockets bound to port 0 get a new port each, and one tag value
 * per port would grow without bound. Sequence numbers are not exported: they are identifiers, not measurements, and
 * a 64-bit one does not fit a double; {@code info} and JMX have them exactly.
 *
 * <p>Every meter carries the tag {@code stack} (the stack's name) and the tags given to the constructor. Values are
 * read from a snapshot at most {@code maxAge} old (one second by default), so a registry that reads many meters at
 * once takes one snapshot, not one per meter. Connections and bound addresses come and go: {@link #bindTo} starts
 * one daemon thread that registers the meters of new ones and removes those of the gone every
 * {@code refreshEvery} (ten seconds by default), so nothing needs calling; {@link #refresh()} does it at once.
 * {@link #close()} stops that thread.
 */
public final class RdsMetrics implements MeterBinder, AutoCloseable {
    /** Kernel counters that count messages; those with {@code bytes} in their name count bytes; others events. */
    private static final Set<String> MESSAGE_COUNTERS = Set.of("recv_drop_old_seq", "recv_drop_no_sock",
            "recv_drop_dead_sock", "recv_delivered", "recv_queued", "send_queued", "send_retransmitted");
    private static final String MESSAGES = "messages";

    private final RdsStack stack;
    private final Tags tags;
    private final long maxAgeNanos;
    private final long refreshEveryNanos;
    /** Per registry bound, the meters registered for each connection or address now; guarded by {@code this}. */
    private final Map<MeterRegistry, Map<Object, List<Meter>>> rows = new HashMap<>();
    private ScheduledThreadPoolExecutor refresher;
    private boolean closed;
    private RdsStackInfo snapshot;
    private long snapshotAt;

    /**
     * Meters for {@code stack}, with snapshots up to one second old, new connections and addresses found within ten
     * seconds.
     *
     * @param stack the stack to measure
     */
    public RdsMetrics(RdsStack stack) {
        this(stack, Tags.empty(), Duration.ofSeconds(1));
    }

    /**
     * Meters for {@code stack}, new connections and addresses found within ten seconds.
     *
     * @param stack the stack to measure
     * @param tags tags added to every meter
     * @param maxAge how old a snapshot may be when a meter is read; {@link Duration#ZERO} for a new one each read
     */
    public RdsMetrics(RdsStack stack, Iterable<Tag> tags, Duration maxAge) {
        this(stack, tags, maxAge, Duration.ofSeconds(10));
    }

    /**
     * Meters for {@code stack}.
     *
     * @param stack the stack to measure
     * @param tags tags added to every meter
     * @param maxAge how old a snapshot may be when a meter is read; {@link Duration#ZERO} for a new one each read
     * @param refreshEvery how often the meters of connections and bound addresses are brought up to date; positive
     */
    public RdsMetrics(RdsStack stack, Iterable<Tag> tags, Duration maxAge, Duration refreshEvery) {
        this.stack = Objects.requireNonNull(stack, "stack: pass the RdsStack to measure");
        this.tags = Tags.of(Objects.requireNonNull(tags, "tags: pass Tags.empty() for none"))
                .and("stack", stack.config().name());
        this.maxAgeNanos = Objects.requireNonNull(maxAge, "maxAge: pass Duration.ZERO for a snapshot per read")
                .toNanos();
        if (refreshEvery == null || refreshEvery.isNegative() || refreshEvery.isZero()) {
            throw new IllegalArgumentException("refreshEvery must be positive, such as Duration.ofSeconds(10); got "
                    + refreshEvery);
        }
        this.refreshEveryNanos = refreshEvery.toNanos();
    }

    /**
     * The meter name for a kernel counter: dots for underscores, {@code bytes} left to the base unit.
     *
     * @param kernelName the counter's name as the kernel's RDS statistics spell it, such as {@code recv_queued}
     * @return the meter's name, such as {@code rds.recv.queued}
     */
    public static String counterName(String kernelName) {
        List<String> words = new ArrayList<>(List.of(kernelName.toLowerCase(Locale.ROOT).split("_")));
        words.remove("bytes");
        return "rds." + String.join(".", words);
    }

    /** The base unit of a kernel counter's meter: bytes, messages, or none (events such as resets or pings). */
    static String counterUnit(String kernelName) {
        if (List.of(kernelName.split("_")).contains("bytes")) {
            return BaseUnits.BYTES;
        }
        return MESSAGE_COUNTERS.contains(kernelName) ? MESSAGES : null;
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        for (String name : stack.counters().keySet()) {
            FunctionCounter.builder(counterName(name), this, m -> m.info().counters().getOrDefault(name, 0L))
                    .description("the stack's " + name + " counter (the kernel's RDS statistic of that name)")
                    .baseUnit(counterUnit(name)).tags(tags).register(registry);
        }
        Gauge.builder("rds.connections", this, m -> m.info().connections().size()).strongReference(true)
                .description("connections to peers").baseUnit("connections").tags(tags).register(registry);
        Gauge.builder("rds.sockets", this, m -> m.info().sockets().size()).strongReference(true)
                .description("open sockets").baseUnit("sockets").tags(tags).register(registry);
        synchronized (this) {
            rows.putIfAbsent(registry, new HashMap<>());
            if (refresher == null && !closed) {
                refresher = new ScheduledThreadPoolExecutor(1, r -> {
                    Thread t = new Thread(r, "rds4j-micrometer-" + stack.config().name());
                    t.setDaemon(true);
                    return t;
                });
                refresher.scheduleWithFixedDelay(this::scheduledRefresh, refreshEveryNanos, refreshEveryNanos,
                        TimeUnit.NANOSECONDS);
            }
        }
        refresh();
    }

    /**
     * Brings the per-connection and per-address meters of every registry bound up to date now: registers those of
     * new connections and bound addresses, removes those of the gone. The binder's thread does this every
     * {@code refreshEvery} on its own.
     */
    public synchronized void refresh() {
        RdsStackInfo now = stack.info();
        snapshot = now;
        snapshotAt = System.nanoTime();
        Set<Object> keys = new LinkedHashSet<>();
        for (RdsConnectionInfo c : now.connections()) {
            keys.add(new ConnectionKey(RdsAddresses.format(c.local()), RdsAddresses.format(c.peer()), c.transport()));
        }
        for (RdsSocketInfo s : now.sockets()) {
            if (s.boundAddress() != null) {
                keys.add(new AddressKey(RdsAddresses.format(s.boundAddress().getAddress())));
            }
        }
        for (Map.Entry<MeterRegistry, Map<Object, List<Meter>>> e : rows.entrySet()) {
            MeterRegistry registry = e.getKey();
            Map<Object, List<Meter>> registered = e.getValue();
            registered.entrySet().removeIf(row -> {
                if (keys.contains(row.getKey())) {
                    return false;
                }
                row.getValue().forEach(registry::remove);
                return true;
            });
            for (Object k : keys) {
                registered.computeIfAbsent(k, key -> key instanceof ConnectionKey c ? register(registry, c)
                        : register(registry, (AddressKey) key));
            }
        }
    }

    /** Stops the binder's refreshing thread; the meters stay registered and readable. Idempotent. */
    @Override
    public void close() {
        ScheduledThreadPoolExecutor r;
        synchronized (this) {
            closed = true;
            r = refresher;
            refresher = null;
        }
        if (r != null) {
            r.shutdownNow();
        }
    }

    private void scheduledRefresh() {
        try {
            refresh();
        } catch (RuntimeException e) {
            // A stack closed under us, or a registry that refuses a meter: the next round tries again; a binder
            // must never take the application down.
        }
    }

    private List<Meter> register(MeterRegistry registry, ConnectionKey k) {
        Tags t = tags.and("local", k.local, "peer", k.peer, "transport", k.transport);
        List<Meter> m = new ArrayList<>();
        m.add(connectionGauge(registry, t, "rds.path.up", "paths connected", "paths", k,
                p -> p.state() == RdsPathInfo.State.UP ? 1 : 0));
        m.add(connectionGauge(registry, t, "rds.path.queued", "messages queued, not yet written", MESSAGES, k,
                RdsPathInfo::queuedMessages));
        m.add(connectionGauge(registry, t, "rds.path.queued.payload", "payload of the messages not yet written",
                BaseUnits.BYTES, k, RdsPathInfo::queuedBytes));
        m.add(connectionGauge(registry, t, "rds.path.unacked", "messages written, not yet acknowledged", MESSAGES,
                k, RdsPathInfo::unackedMessages));
        m.add(connectionGauge(registry, t, "rds.path.unacked.payload",
                "payload of the messages written, not yet acknowledged", BaseUnits.BYTES, k,
                RdsPathInfo::unackedBytes));
        m.add(FunctionCounter.builder("rds.path.resets", this, x -> x.sumPaths(k, RdsPathInfo::resets))
                .description("times a path's connection was lost, all paths of the connection")
                .baseUnit("resets").tags(t).register(registry));
        return m;
    }

    private List<Meter> register(MeterRegistry registry, AddressKey k) {
        Tags t = tags.and("address", k.address);
        List<Meter> m = new ArrayList<>();
        m.add(addressGauge(registry, t, "rds.socket.bound", "sockets bound to the address", "sockets", k, s -> 1));
        m.add(addressGauge(registry, t, "rds.socket.send.queued", "payload sent, not yet acknowledged",
                BaseUnits.BYTES, k, RdsSocketInfo::sendQueuedBytes));
        m.add(addressGauge(registry, t, "rds.socket.receive.queued", "payload received, not yet read",
                BaseUnits.BYTES, k, RdsSocketInfo::receiveQueuedBytes));
        m.add(addressGauge(registry, t, "rds.socket.receive.messages", "messages received, not yet read", MESSAGES,
                k, RdsSocketInfo::receiveQueuedMessages));
        m.add(addressGauge(registry, t, "rds.socket.congested", "sockets whose port is marked congested", "sockets",
                k, s -> s.congested() ? 1 : 0));
        return m;
    }

    private Gauge connectionGauge(MeterRegistry registry, Tags t, String name, String description, String unit,
                                  ConnectionKey k, ToDoubleFunction<RdsPathInfo> value) {
        return Gauge.builder(name, this, m -> m.sumPaths(k, value)).strongReference(true)
                .description(description + ", all paths of the connection").baseUnit(unit).tags(t)
                .register(registry);
    }

    private Gauge addressGauge(MeterRegistry registry, Tags t, String name, String description, String unit,
                               AddressKey k, ToDoubleFunction<RdsSocketInfo> value) {
        return Gauge.builder(name, this, m -> m.sumSockets(k, value)).strongReference(true)
                .description(description + ", all sockets of the address").baseUnit(unit).tags(t)
                .register(registry);
    }

    /** The stack's snapshot, taken again once older than {@code maxAge}. */
    synchronized RdsStackInfo info() {
        long now = System.nanoTime();
        if (snapshot == null || now - snapshotAt >= maxAgeNanos) {
            snapshot = stack.info();
            snapshotAt = now;
        }
        return snapshot;
    }

    /** The sum over the connection's paths, NaN once it is gone (until the next refresh removes the meter). */
    private double sumPaths(ConnectionKey k, ToDoubleFunction<RdsPathInfo> value) {
        for (RdsConnectionInfo c : info().connections()) {
            if (c.transport().equals(k.transport) && RdsAddresses.format(c.local()).equals(k.local)
                    && RdsAddresses.format(c.peer()).equals(k.peer)) {
                double sum = 0;
                for (RdsPathInfo p : c.paths()) {
                    sum += value.applyAsDouble(p);
                }
                return sum;
            }
        }
        return Double.NaN;
    }

    private double sumSockets(AddressKey k, ToDoubleFunction<RdsSocketInfo> value) {
        double sum = 0;
        boolean any = false;
        for (RdsSocketInfo s : info().sockets()) {
            if (s.boundAddress() != null && RdsAddresses.format(s.boundAddress().getAddress()).equals(k.address)) {
                sum += value.applyAsDouble(s);
                any = true;
            }
        }
        return any ? sum : Double.NaN;
    }

    private record ConnectionKey(String local, String peer, String transport) {
    }

    private record AddressKey(String address) {
    }

    @Override
    public String toString() {
        return "RdsMetrics[" + stack.config().name() + "]";
    }
}
