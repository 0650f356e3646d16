package org.rds4j.transport.tcp;

import java.util.Map;
import org.rds4j.core.testkit.TestHosts;

/**
 * The socket contract with caller I/O off ({@code tcp.callerIo=false}): every read and write on the I/O threads, the
 * transport's mode on NIO and the one a stack chooses when its application threads should not touch the sockets.
 */
class TcpIoThreadSocketSemanticsTest extends TcpSocketSemanticsTest {
    @Override
    protected TestHosts hosts() {
        return new TcpHosts(Map.of("tcp.callerIo", "false"));
    }
}
