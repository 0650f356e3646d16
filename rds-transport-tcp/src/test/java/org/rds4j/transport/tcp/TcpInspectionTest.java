package org.rds4j.transport.tcp;

import org.junit.jupiter.api.AfterEach;
import org.rds4j.core.testkit.InspectionContract;
import org.rds4j.core.testkit.TestHosts;

/** RdsStack.info() and the stack's MBean over real TCP (127.0.0.1 and 127.0.0.2). */
class TcpInspectionTest extends InspectionContract {
    @Override
    protected TestHosts hosts() {
        return new TcpHosts();
    }

    @AfterEach
    void noLeaks() {
        LeakRecorder.assertNoLeaks();
    }
}
