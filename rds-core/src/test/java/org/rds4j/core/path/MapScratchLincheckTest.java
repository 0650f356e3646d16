package org.rds4j.core.path;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicReferenceArray;
import org.jetbrains.lincheck.Lincheck;
import org.junit.jupiter.api.Test;
import org.rds4j.core.util.ConcurrentRun;

/**
 * A connection's scratch buffer for arriving congestion maps ({@link MapScratch}), taken and given back by the paths'
 * I/O threads, model-checked by Lincheck at every shared read and write: in every interleaving of two paths each
 * receiving two maps, no buffer is held by two paths at once (one map's bytes would land in another's).
 */
class MapScratchLincheckTest {
    private static final int INVOCATIONS = 150;
    private static final int PATHS = 2;

    @Test
    void aBufferIsNeverHeldByTwoPathsAtOnce() {
        Lincheck.runConcurrentTest(INVOCATIONS, () -> {
            MapScratch scratch = new MapScratch();
            scratch.give(ByteBuffer.allocate(8));          // the connection's buffer, free
            AtomicReferenceArray<ByteBuffer> holding = new AtomicReferenceArray<>(PATHS);
            Runnable[] paths = new Runnable[PATHS];
            for (int p = 0; p < PATHS; p++) {
                int me = p;
                paths[p] = () -> {
                    for (int i = 0; i < 2; i++) {
                        ByteBuffer b = scratch.take();
                        holding.set(me, b);                 // ours first, then look at the others': of two paths
                        for (int o = 0; o < PATHS; o++) {   // holding one buffer, one sees the other
                            assertTrue(o == me || holding.get(o) != b, "a buffer handed to two paths at once");
                        }
                        holding.set(me, null);
                        scratch.give(b);
                    }
                };
            }
            ConcurrentRun.all(paths);
        });
    }
}
