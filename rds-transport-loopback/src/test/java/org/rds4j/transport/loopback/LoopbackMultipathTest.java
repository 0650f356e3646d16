package org.rds4j.transport.loopback;

import org.rds4j.core.testkit.MultipathContract;
import org.rds4j.core.testkit.TestHosts;

/** {@link MultipathContract} over the in-JVM transport, which encodes path indexes in its made-up ports too. */
class LoopbackMultipathTest extends MultipathContract {
    @Override
    protected TestHosts hosts() {
        return new LoopbackHosts();
    }
}
