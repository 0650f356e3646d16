package org.rds4j.transport.loopback;

import org.rds4j.core.testkit.CongestionContract;
import org.rds4j.core.testkit.TestHosts;

/** The congestion and socket-semantics contract over the in-JVM transport. */
class LoopbackCongestionTest extends CongestionContract {
    @Override
    protected TestHosts hosts() {
        return new LoopbackHosts();
    }
}
