package org.rds4j.transport.tcp;

/**
 * {@link CallerIoTest} on Netty's NIO channels ({@code tcp.native=false}, and wherever epoll does not load): the
 * callers read and write the JDK channel under each.
 */
class CallerIoNioTest extends CallerIoTest {
    @Override
    String nativeTransport() {
        return "false";
    }
}
