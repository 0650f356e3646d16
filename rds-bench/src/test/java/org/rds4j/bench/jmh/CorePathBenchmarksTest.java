package org.rds4j.bench.jmh;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * The two core-path benchmarks' state driven by hand (no JMH run): set up, a few thousand ops, tear down, so that a
 * change in the core that breaks them (say, acknowledgements no longer releasing) shows in the build.
 */
class CorePathBenchmarksTest {
    @Test
    void enqueueTransmitSendsAndIsAcknowledged() throws Exception {
        for (int size : new int[] {64, 1024}) {
            EnqueueTransmitBenchmark b = new EnqueueTransmitBenchmark();
            b.size = size;
            b.setUp();
            try {
                // Far more than the send budget holds without acknowledgements; a non-blocking send would throw.
                for (int i = 0; i < 20_000; i++) {
                    assertEquals(size, b.send());
                }
            } finally {
                b.tearDown();    // checks that every send reached the sink
            }
        }
    }

    @Test
    void receiveDeliverDrainsEveryFrame() throws Exception {
        ReceiveDeliverBenchmark b = new ReceiveDeliverBenchmark();
        b.setUp();
        try {
            for (int i = 0; i < 50; i++) {
                assertEquals(ReceiveDeliverBenchmark.FRAMES_64 * 64, b.deliver64());
                assertEquals(ReceiveDeliverBenchmark.FRAMES_1K * 1024, b.deliver1k());
            }
            assertTrue(ReceiveDeliverBenchmark.FRAMES_64 > 500 && ReceiveDeliverBenchmark.FRAMES_1K > 60);
        } finally {
            b.tearDown();
        }
    }
}
