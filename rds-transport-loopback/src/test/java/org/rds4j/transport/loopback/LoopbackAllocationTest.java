package org.rds4j.transport.loopback;

import org.rds4j.core.testkit.AllocationContract;
import org.rds4j.core.testkit.TestHosts;

/** The zero-garbage contract over the loopback transport. */
class LoopbackAllocationTest extends AllocationContract {
    @Override
    protected TestHosts hosts() {
        return new LoopbackHosts();
    }
}
