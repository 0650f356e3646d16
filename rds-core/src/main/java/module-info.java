/**
 * The RDS protocol: header codec, connection paths with sequence numbers and reconnection, congestion maps, sockets
 * and stacks. Applications reach it through rds-api's {@link org.rds4j.spi.RdsStackProvider}; transports plug in
 * through {@link org.rds4j.core.spi.RdsTransport}, the one package exported to all.
 */
module org.rds4j.core {
    requires transitive org.rds4j.api;
    requires org.slf4j;
    // A stack's MBean (StackMBean): what ./rds4j info and JMX clients read.
    requires java.management;
    // sun.misc.Unsafe.invokeCleaner: frees a direct buffer the stack is done with at once (OffHeapMemory).
    requires jdk.unsupported;

    // The transport contract, for any transport: the only package others may build on. Applications use rds-api;
    // the engine (the stack, sockets, connection paths, the codec and congestion maps) is internal.
    exports org.rds4j.core.spi;
    // Allocation-free pools, for the project's own transports; not an API.
    exports org.rds4j.core.util to org.rds4j.transport.loopback, org.rds4j.transport.tcp;

    uses org.rds4j.core.spi.RdsTransport;
    provides org.rds4j.spi.RdsStackProvider with org.rds4j.core.stack.CoreStackProvider;
}
