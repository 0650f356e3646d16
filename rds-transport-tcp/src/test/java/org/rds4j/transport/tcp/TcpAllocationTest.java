package org.rds4j.transport.tcp;

import io.netty.util.ResourceLeakDetector;
import org.junit.jupiter.api.AfterEach;
import org.rds4j.core.testkit.AllocationContract;
import org.rds4j.core.testkit.TestHosts;

/** The zero-garbage contract over real TCP on 127.0.0.1 and 127.0.0.2. */
class TcpAllocationTest extends AllocationContract {
    @Override
    protected TestHosts hosts() {
        return new TcpHosts();
    }

    private ResourceLeakDetector.Level testLevel;

    /** Measure with Netty's production leak detection (SIMPLE: sampled, no access records), not the tests'. */
    @Override
    protected void beforeMeasuring() {
        testLevel = ResourceLeakDetector.getLevel();
        ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.SIMPLE);
    }

    @Override
    protected void afterMeasuring() {
        ResourceLeakDetector.setLevel(testLevel);
    }

    @AfterEach
    void noLeaks() {
        LeakRecorder.assertNoLeaks();
    }
}
