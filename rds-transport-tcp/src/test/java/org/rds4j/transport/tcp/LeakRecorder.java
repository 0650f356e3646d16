package org.rds4j.transport.tcp;

import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.util.ResourceLeakDetector;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * Netty's leak detector, installed for every buffer type through {@code -Dio.netty.customResourceLeakDetector} (set
 * in this module's pom), that records each leak it finds instead of only logging it, so that {@link #assertNoLeaks()}
 * can turn a leak into a test failure.
 */
public final class LeakRecorder<T> extends ResourceLeakDetector<T> {
    private static final ConcurrentLinkedQueue<String> LEAKS = new ConcurrentLinkedQueue<>();

    public LeakRecorder(Class<?> resourceType, int samplingInterval) {
        super(resourceType, samplingInterval);
    }

    public LeakRecorder(Class<?> resourceType, int samplingInterval, long maxActive) {
        super(resourceType, samplingInterval, maxActive);
    }

    @Override
    protected void reportTracedLeak(String resourceType, String records) {
        LEAKS.add(resourceType + " leaked:" + records);
        super.reportTracedLeak(resourceType, records);
    }

    @Override
    protected void reportUntracedLeak(String resourceType) {
        LEAKS.add(resourceType + " leaked (untraced)");
        super.reportUntracedLeak(resourceType);
    }

    /** Whether the detector in use is this one (the system property reached Netty). */
    static boolean installed() {
        return io.netty.util.ResourceLeakDetectorFactory.instance()
                .newResourceLeakDetector(Object.class) instanceof LeakRecorder;
    }

    /** Collects garbage so that leaked buffers are found, and returns (and forgets) the leaks found so far. */
    static List<String> collect() {
        for (int i = 0; i < 5; i++) {
            System.gc();
            // The detector checks its reference queue when a buffer is allocated: allocate to trigger the check.
            for (int j = 0; j < 10; j++) {
                PooledByteBufAllocator.DEFAULT.directBuffer(16).release();
                UnpooledByteBufAllocator.DEFAULT.heapBuffer(16).release();
            }
        }
        List<String> found = new ArrayList<>();
        for (String s; (s = LEAKS.poll()) != null; ) {
            found.add(s);
        }
        return found;
    }

    /** Fails if any buffer was leaked since the last call. */
    static void assertNoLeaks() {
        List<String> leaks = collect();
        if (!leaks.isEmpty()) {
            throw new AssertionError(leaks.size() + " ByteBuf leak(s):\n" + String.join("\n\n", leaks));
        }
    }
}
