package org.rds4j.transport.tcp;

import org.junit.jupiter.api.AfterEach;
import org.rds4j.core.testkit.SocketSemanticsContract;
import org.rds4j.core.testkit.TestHosts;

/** The socket contract over real TCP between 127.0.0.1 and 127.0.0.2. */
class TcpSocketSemanticsTest extends SocketSemanticsContract {
    @Override
    protected TestHosts hosts() {
        return new TcpHosts();
    }

    @AfterEach
    void noLeaks() {
        LeakRecorder.assertNoLeaks();
    }
}
