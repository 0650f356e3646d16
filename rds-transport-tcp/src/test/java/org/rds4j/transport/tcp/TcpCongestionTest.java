package org.rds4j.transport.tcp;

import org.junit.jupiter.api.AfterEach;
import org.rds4j.core.testkit.CongestionContract;
import org.rds4j.core.testkit.TestHosts;

/** The congestion and socket-semantics contract over real TCP. */
class TcpCongestionTest extends CongestionContract {
    @Override
    protected TestHosts hosts() {
        return new TcpHosts();
    }

    @AfterEach
    void noLeaks() {
        LeakRecorder.assertNoLeaks();
    }
}
