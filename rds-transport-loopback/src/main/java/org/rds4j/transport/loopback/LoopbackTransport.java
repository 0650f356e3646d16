package org.rds4j.transport.loopback;

import org.rds4j.core.spi.RdsTransport;
import org.rds4j.core.spi.TransportHost;
import org.rds4j.core.spi.TransportInstance;

/**
 * RDS between stacks of one JVM, without sockets. Every stack that uses it listens on its bound addresses in a
 * JVM-wide {@link LoopbackFabric}; a connection is a pair of in-memory byte pipes that behave like a TCP connection:
 * ordered bytes split at arbitrary points, a high-water mark that pushes back on the sender, orderly close and
 * reset. The core runs exactly as over TCP, so unit tests with this transport exercise the real protocol.
 *
 * <p>Any unicast address can be bound, so tests can build hosts such as 10.0.0.1 and 10.0.0.2 without touching the
 * network. Properties: {@code loopback.highWaterMark} (bytes in flight before the sender is paused, default 1 MiB),
 * {@code loopback.yieldMicros} (how long the stack's idle loopback thread yields and looks for work before it parks,
 * default 100; 0 parks at once), {@code loopback.sharedLoop} ({@code true} by default: the stacks of the JVM with the
 * same {@code loopback.yieldMicros} share one thread, {@code rds4j-loopback}; {@code false}: the stack has its own,
 * {@code rds4j-NAME-loop}).
 */
public final class LoopbackTransport implements RdsTransport {
    /** The transport's name, for {@code SO_RDS_TRANSPORT} and {@code RdsStackConfig.defaultTransport}. */
    public static final String NAME = "loopback";

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public TransportInstance open(TransportHost host) {
        return new LoopbackInstance(host);
    }
}
