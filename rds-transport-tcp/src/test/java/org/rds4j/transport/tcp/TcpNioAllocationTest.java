package org.rds4j.transport.tcp;

import java.util.Map;
import org.rds4j.core.testkit.TestHosts;

/**
 * The zero-garbage contract over Netty's NIO channels ({@code tcp.native=false}, and wherever epoll does not load):
 * a NIO channel writes each buffer through a {@code ByteBuffer} view of it, where epoll writes by address,
 * so a buffer that makes a new view per write costs garbage here only.
 */
class TcpNioAllocationTest extends TcpAllocationTest {
    @Override
    protected TestHosts hosts() {
        return new TcpHosts(Map.of("tcp.native", "false"));
    }
}
