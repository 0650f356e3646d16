package org.rds4j.transport.tcp;

import org.rds4j.core.testkit.MultipathContract;
import org.rds4j.core.testkit.TestHosts;

/** {@link MultipathContract} over real TCP on 127.0.0.1 and 127.0.0.2: 8 TCP connections per host pair. */
class TcpMultipathTest extends MultipathContract {
    @Override
    protected TestHosts hosts() {
        return new TcpHosts();
    }
}
