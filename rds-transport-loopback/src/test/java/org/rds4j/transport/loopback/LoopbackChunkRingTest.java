package org.rds4j.transport.loopback;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import org.junit.jupiter.api.Test;

/**
 * When a writing end makes a chunk rather than reuse one ({@link LoopbackEndpoint#grows}): a fast stream grows its
 * ring until a reused chunk was read {@link LoopbackEndpoint#RING} chunks' worth of its reader's traffic ago, and no
 * further. Each case runs the rule over a stream's chunk switches as the endpoint does, from the two chunks an end
 * starts with.
 */
class LoopbackChunkRingTest {
    /** A chunk filled in 50 µs: 1.3 GB/s, well inside the fast mark. */
    private static final long FAST = 50_000L;

    /** The chunks a writer ends with after {@code switches} chunks, each filled in {@code fillNanos}. */
    private static int ring(long fillNanos, long readerMovedPerChunk, int switches) {
        int made = 2;
        for (int i = 0; i < switches; i++) {
            if (LoopbackEndpoint.grows(fillNanos, readerMovedPerChunk, made)) {
                made++;
            }
        }
        return made;
    }

    @Test
    void aFastStreamItsReaderReadsAloneMakesTheWholeRing() {
        assertEquals(LoopbackEndpoint.RING, ring(FAST, Chunk.SIZE, LoopbackEndpoint.RING_WINDOW),
                "a reader moving only this stream");
        // Reading it and writing replies of the same size: its thread moves twice the stream.
        assertEquals(LoopbackEndpoint.RING / 2, ring(FAST, 2L * Chunk.SIZE, LoopbackEndpoint.RING_WINDOW),
                "a reader that replies in kind");
    }

    @Test
    void aFastStreamBesideOneThirtyTimesFasterOnItsReadersThreadKeepsItsFirstTwo() {
        // The maps and acknowledgements back to a writer of 64 KiB messages: about 200 MB/s against 6 GB/s.
        assertEquals(2, ring(300_000L, 30L * Chunk.SIZE, LoopbackEndpoint.RING_WINDOW));
        assertFalse(LoopbackEndpoint.grows(300_000L, 16L * Chunk.SIZE, 2), "2 chunks, reused 32 chunks' worth on");
    }

    @Test
    void aSlowStreamMakesNoChunkWhateverItsReaderDoes() {
        assertEquals(2, ring(LoopbackEndpoint.FAST_CHUNK_NANOS, 0, LoopbackEndpoint.RING_WINDOW));
        assertEquals(2, ring(5 * LoopbackEndpoint.FAST_CHUNK_NANOS, Chunk.SIZE, LoopbackEndpoint.RING_WINDOW));
    }
}
