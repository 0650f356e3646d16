package org.rds4j.transport.tcp;

import java.util.Map;
import org.rds4j.core.testkit.TestHosts;

/**
 * The zero-garbage contract on epoll with caller I/O off ({@code tcp.callerIo=false}): the I/O threads do every read
 * and write, as on NIO, whose frames and deliveries then take the event loop's path only.
 */
class TcpIoThreadAllocationTest extends TcpAllocationTest {
    @Override
    protected TestHosts hosts() {
        return new TcpHosts(Map.of("tcp.callerIo", "false"));
    }
}
