package org.rds4j.transport.loopback;

import static org.junit.jupiter.api.Assertions.assertTrue;

import org.jetbrains.lincheck.Lincheck;
import org.junit.jupiter.api.Test;

/**
 * A loopback writer stopping for room against its peer consuming ({@link WriteWindow}), model-checked by Lincheck at
 * every shared read and write: the writer's stream is at its high-water mark and it checks for room once more while
 * the peer reports what it consumed, first half of it, then all. In every interleaving the writer either finds the
 * room or is asked for a pass by the peer's report: a writer that stopped with nobody to ask for its next pass would
 * keep its queued messages until something else kicked it.
 */
class WriteWindowLincheckTest {
    private static final int INVOCATIONS = 200;
    private static final long HIGH_WATER_MARK = 8;

    @Test
    void aWriterThatStopsForRoomIsAskedForAPass() {
        Lincheck.runConcurrentTest(INVOCATIONS, () -> {
            WriteWindow window = new WriteWindow();
            long written = HIGH_WATER_MARK;             // full: the writer's first look finds no room
            boolean[] stopped = new boolean[1];
            boolean[] asked = new boolean[1];
            Thread writer = new Thread(() -> stopped[0] = !window.hasRoom(written, HIGH_WATER_MARK));
            Thread peer = new Thread(() -> {
                boolean half = window.consumed(written / 2, written, HIGH_WATER_MARK);
                boolean all = window.consumed(written, written, HIGH_WATER_MARK);
                asked[0] = half || all;
            });
            writer.start();
            peer.start();
            try {
                writer.join();
                peer.join();
            } catch (InterruptedException e) {
                throw new AssertionError("nobody interrupts these threads", e);
            }
            assertTrue(!stopped[0] || asked[0], "the writer stopped for room and nothing asked for its next pass");
        });
    }
}
