package org.rds4j.transport.loopback;

import org.rds4j.core.testkit.SocketSemanticsContract;
import org.rds4j.core.testkit.TestHosts;

/** The socket contract over the in-JVM transport. */
class LoopbackSocketSemanticsTest extends SocketSemanticsContract {
    @Override
    protected TestHosts hosts() {
        return new LoopbackHosts();
    }
}
