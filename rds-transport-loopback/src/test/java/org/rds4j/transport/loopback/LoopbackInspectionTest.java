package org.rds4j.transport.loopback;

import org.rds4j.core.testkit.InspectionContract;
import org.rds4j.core.testkit.TestHosts;

/** RdsStack.info() and the stack's MBean over the in-JVM transport. */
class LoopbackInspectionTest extends InspectionContract {
    @Override
    protected TestHosts hosts() {
        return new LoopbackHosts();
    }
}
