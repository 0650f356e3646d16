/** Moves RDS frames between stacks of one JVM, with TCP's semantics and no sockets: the transport for unit tests. */
module org.rds4j.transport.loopback {
    requires org.rds4j.core;
    requires org.slf4j;

    exports org.rds4j.transport.loopback;

    provides org.rds4j.core.spi.RdsTransport with org.rds4j.transport.loopback.LoopbackTransport;
}
