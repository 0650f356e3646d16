package org.rds4j.micrometer;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.ToDoubleFunction;
import org.rds4j.RdsAddresses;
import org.rds4j.RdsConnectionInfo;
import org.rds4j.RdsPathInfo;
import org.rds4j.RdsSocketInfo;
import org.rds4j.RdsStack;
import org.rds4j.RdsStackInfo;

/**
 * Micrometer meters for one {@link RdsStack}, read from {@link RdsStack#info()}:
 *
 * <ul>
 *   <li>one function counter per kernel counter, named {@code rds.} and the kernel's name
 *       ({@code rds.recv_queued}, {@code rds.conn_reset}, ...);</li>
 *   <li>{@code rds.connections} and {@code rds.sockets}, how many the stack has;</li>
 *   <li>per path of each connection, tagged {@code local}, {@code peer}, {@code transport} and {@code path}:
 *       {@code rds.path.up} (1 or 0), {@code rds.path.next.tx.sequence}, {@code rds.path.next.rx.sequence},
 *       {@code rds.path.queued.messages}, {@code rds.path.queued.bytes}, {@code rds.path.unacked.messages},
 *       {@code rds.path.unacked.bytes} and {@code rds.path.resets};</li>
 *   <li>per bound socket, tagged {@code address} and {@code port}: {@code rds.socket.send.budget},
 *       {@code rds.socket.receive.budget}, {@code rds.socket.send.queued.bytes},
 *       {@code rds.socket.receive.queued.bytes}, {@code rds.socket.receive.queued.messages} and
 *       {@code rds.socket.congested} (1 or 0).</li>
 * </ul>
 *
 * <p>Every meter carries the tag {@code stack} (the stack's name) and the tags given to the constructor. Values are
 * read from a snapshot at most {@code maxAge} old (one second by default), so a registry that reads many meters at
 * once takes one snapshot, not one per meter. Connections and sockets come and go: {@link #refresh()} sets the rows
 * of the per-path and per-socket gauges to those of the stack now (and drops those gone); call it at the pace you
 * publish (a scheduled task), or after opening sockets. {@link #bindTo} calls it once.
 */
public final class RdsMetrics implements MeterBinder {
    private final RdsStack stack;
    private final Tags tags;
    private final long maxAgeNanos;
    private final List<PathGauge> pathGauges = new ArrayList<>();
    private final List<SocketGauge> socketGauges = new ArrayList<>();
    private RdsStackInfo snapshot;
    private long snapshotAt;

    /**
     * Meters for {@code stack}, with snapshots up to one second old.
     *
     * @param stack the stack to measure
     */
    public RdsMetrics(RdsStack stack) {
        this(stack, Tags.empty(), Duration.ofSeconds(1));
    }

    /**
     * Meters for {@code stack}.
     *
     * @param stack the stack to measure
     * @param tags tags added to every meter
     * @param maxAge how old a snapshot may be when a meter is read; {@link Duration#ZERO} for a new one each read
     */
    public RdsMetrics(RdsStack stack, Iterable<Tag> tags, Duration maxAge) {
        this.stack = Objects.requireNonNull(stack, "stack");
        this.tags = Tags.of(tags).and("stack", stack.config().name());
        this.maxAgeNanos = maxAge.toNanos();
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        for (String name : stack.counters().keySet()) {
            FunctionCounter.builder("rds." + name, this, m -> m.info().counters().getOrDefault(name, 0L))
                    .description("the stack's " + name + " counter (the kernel's name)")
                    .tags(tags).register(registry);
        }
        Gauge.builder("rds.connections", this, m -> m.info().connections().size())
                .description("connections to peers").tags(tags).register(registry);
        Gauge.builder("rds.sockets", this, m -> m.info().sockets().size())
                .description("open sockets").tags(tags).register(registry);
        synchronized (this) {
            path(registry, "rds.path.up", "1 while the path is connected", p -> p.state() == RdsPathInfo.State.UP
                    ? 1 : 0);
            path(registry, "rds.path.next.tx.sequence", "the next sequence number to send", p ->
                    unsigned(p.nextTxSequence()));
            path(registry, "rds.path.next.rx.sequence", "the next sequence number expected", p ->
                    unsigned(p.nextRxSequence()));
            path(registry, "rds.path.queued.messages", "messages not yet written", RdsPathInfo::queuedMessages);
            path(registry, "rds.path.queued.bytes", "their payload bytes", RdsPathInfo::queuedBytes);
            path(registry, "rds.path.unacked.messages", "messages written, not yet acknowledged",
                    RdsPathInfo::unackedMessages);
            path(registry, "rds.path.unacked.bytes", "their payload bytes", RdsPathInfo::unackedBytes);
            path(registry, "rds.path.resets", "times the path's connection was lost", RdsPathInfo::resets);
            socket(registry, "rds.socket.send.budget", "half of SO_SNDBUF", RdsSocketInfo::sendBudget);
            socket(registry, "rds.socket.receive.budget", "half of SO_RCVBUF", RdsSocketInfo::receiveBudget);
            socket(registry, "rds.socket.send.queued.bytes", "payload bytes sent, not yet acknowledged",
                    RdsSocketInfo::sendQueuedBytes);
            socket(registry, "rds.socket.receive.queued.bytes", "payload bytes received, not yet read",
                    RdsSocketInfo::receiveQueuedBytes);
            socket(registry, "rds.socket.receive.queued.messages", "messages received, not yet read",
                    RdsSocketInfo::receiveQueuedMessages);
            socket(registry, "rds.socket.congested", "1 while the socket's port is marked congested", s ->
                    s.congested() ? 1 : 0);
        }
        refresh();
    }

    /**
     * Sets the rows of the per-path and per-socket gauges to the paths and bound sockets the stack has now; rows of
     * those gone are removed.
     */
    public synchronized void refresh() {
        RdsStackInfo now = info();
        List<PathKey> paths = new ArrayList<>();
        for (RdsConnectionInfo c : now.connections()) {
            for (RdsPathInfo p : c.paths()) {
                paths.add(new PathKey(RdsAddresses.format(c.local()), RdsAddresses.format(c.peer()), c.transport(),
                        p.index()));
            }
        }
        List<SocketKey> sockets = new ArrayList<>();
        for (RdsSocketInfo s : now.sockets()) {
            if (s.boundAddress() != null) {
                sockets.add(new SocketKey(RdsAddresses.format(s.boundAddress().getAddress()), s.boundAddress().getPort()));
            }
        }
        for (PathGauge g : pathGauges) {
            List<MultiGauge.Row<?>> rows = new ArrayList<>();
            for (PathKey k : paths) {
                rows.add(MultiGauge.Row.of(k.tags(), this, m -> m.path(k).map(g.value::applyAsDouble)
                        .orElse(Double.NaN)));
            }
            g.gauge.register(rows, true);
        }
        for (SocketGauge g : socketGauges) {
            List<MultiGauge.Row<?>> rows = new ArrayList<>();
            for (SocketKey k : sockets) {
                rows.add(MultiGauge.Row.of(k.tags(), this, m -> m.socket(k).map(g.value::applyAsDouble)
                        .orElse(Double.NaN)));
            }
            g.gauge.register(rows, true);
        }
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

    private java.util.Optional<RdsPathInfo> path(PathKey k) {
        for (RdsConnectionInfo c : info().connections()) {
            if (c.transport().equals(k.transport) && RdsAddresses.format(c.local()).equals(k.local)
                    && RdsAddresses.format(c.peer()).equals(k.peer) && k.index < c.paths().size()) {
                return java.util.Optional.of(c.paths().get(k.index));
            }
        }
        return java.util.Optional.empty();
    }

    private java.util.Optional<RdsSocketInfo> socket(SocketKey k) {
        for (RdsSocketInfo s : info().sockets()) {
            if (s.boundAddress() != null && s.boundAddress().getPort() == k.port
                    && RdsAddresses.format(s.boundAddress().getAddress()).equals(k.address)) {
                return java.util.Optional.of(s);
            }
        }
        return java.util.Optional.empty();
    }

    private void path(MeterRegistry registry, String name, String description, ToDoubleFunction<RdsPathInfo> value) {
        pathGauges.add(new PathGauge(MultiGauge.builder(name).description(description).tags(tags).register(registry),
                value));
    }

    private void socket(MeterRegistry registry, String name, String description,
                        ToDoubleFunction<RdsSocketInfo> value) {
        socketGauges.add(new SocketGauge(MultiGauge.builder(name).description(description).tags(tags)
                .register(registry), value));
    }

    /** An unsigned 64-bit sequence number as a double (exact below 2^53, which a sequence reaches in no lifetime). */
    private static double unsigned(long v) {
        return v >= 0 ? v : (double) (v >>> 1) * 2.0;
    }

    private record PathGauge(MultiGauge gauge, ToDoubleFunction<RdsPathInfo> value) {
    }

    private record SocketGauge(MultiGauge gauge, ToDoubleFunction<RdsSocketInfo> value) {
    }

    private record PathKey(String local, String peer, String transport, int index) {
        Tags tags() {
            return Tags.of("local", local, "peer", peer, "transport", transport, "path", Integer.toString(index));
        }
    }

    private record SocketKey(String address, int port) {
        Tags tags() {
            return Tags.of("address", address, "port", Integer.toString(port));
        }
    }

    @Override
    public String toString() {
        return "RdsMetrics[" + stack.config().name() + "]";
    }
}
