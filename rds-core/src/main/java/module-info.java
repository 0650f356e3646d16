/**
 * The RDS protocol: header codec, connection paths with sequence numbers and reconnection, congestion maps, sockets
 * and stacks. Transports plug in through {@link org.rds4j.core.spi.RdsTransport}.
 */
module org.rds4j.core {
    requires transitive org.rds4j.api;
    requires org.slf4j;
    // A stack's MBean (StackMBean): what ./rds4j info and JMX clients read.
    requires java.management;
    // sun.misc.Unsafe.invokeCleaner: frees a direct buffer the stack is done with at once (OffHeapMemory).
    requires jdk.unsupported;

    // The engine is internal; the TCP transport's tests inspect a stack's connections.
    exports org.rds4j.core.stack to org.rds4j.transport.tcp;
    exports org.rds4j.core.spi;
    exports org.rds4j.core.wire;
    exports org.rds4j.core.cong;
    exports org.rds4j.core.path to org.rds4j.transport.tcp;
    // Allocation-free pools, for the project's own transports; not an API.
    exports org.rds4j.core.util to org.rds4j.transport.loopback, org.rds4j.transport.tcp;

    uses org.rds4j.core.spi.RdsTransport;
    provides org.rds4j.spi.RdsStackProvider with org.rds4j.core.stack.CoreStackProvider;
}
