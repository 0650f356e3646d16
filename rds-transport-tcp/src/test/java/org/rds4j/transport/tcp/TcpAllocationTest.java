package org.rds4j.transport.tcp;

import io.netty.util.ResourceLeakDetector;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.rds4j.core.testkit.AllocationContract;
import org.rds4j.core.testkit.TestHosts;

/**
 * The zero-garbage contract over real TCP on 127.0.0.1 and 127.0.0.2, with Netty's production leak detection
 * (SIMPLE: sampled, no access records) rather than the tests' paranoid level, from before the stacks start to after
 * they close. The level must hold for the whole test, not only the measured phase: a buffer allocated under the
 * paranoid level is wrapped to record a stack trace at every access for as long as it lives, so one the transport
 * made during the warm-up and kept would allocate on every use in the phase.
 */
class TcpAllocationTest extends AllocationContract {
    private static ResourceLeakDetector.Level testLevel;

    @BeforeAll
    static void productionLeakDetection() {
        testLevel = ResourceLeakDetector.getLevel();
        ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.SIMPLE);
    }

    @AfterAll
    static void testLeakDetection() {
        ResourceLeakDetector.setLevel(testLevel);
    }

    @Override
    protected TestHosts hosts() {
        return new TcpHosts();
    }

    @AfterEach
    void noLeaks() {
        LeakRecorder.assertNoLeaks();
    }
}
