/**
 * RDS over TCP on Netty: moves the byte stream of each RDS path over one TCP connection, as the Linux kernel's
 * {@code rds_tcp} does, and reports connection events to the core. See {@link org.rds4j.transport.tcp}.
 */
module org.rds4j.transport.tcp {
    requires org.rds4j.api;
    requires org.rds4j.core;
    requires org.slf4j;
    requires io.netty.common;
    requires io.netty.buffer;
    requires io.netty.transport;
    requires io.netty.transport.classes.epoll;
    requires io.netty.transport.unix.common;
    requires io.netty.handler;
    requires jdk.net;

    provides org.rds4j.core.spi.RdsTransport with org.rds4j.transport.tcp.TcpTransport;
}
