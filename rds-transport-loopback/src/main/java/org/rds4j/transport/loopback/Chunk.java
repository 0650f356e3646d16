package org.rds4j.transport.loopback;

import java.nio.ByteBuffer;

/**
 * A writer's 64 KiB of stream, pooled, with the reader's view of the same bytes made once with it: the writer fills
 * {@link #bytes}, the other end hands its segments to its handler through {@link #view}. A view made when the reader
 * reached a new chunk was one object per chunk, which at 64 KiB messages was one per message (30 to 60 bytes per
 * message in {@code ./rds4j bench}, 900 at 1 MiB).
 */
final class Chunk {
    static final int SIZE = 64 * 1024;

    /** The writer's: its position is where the next byte goes. */
    final ByteBuffer bytes = ByteBuffer.allocate(SIZE);
    /** The reader's: set to a segment's region before the handler sees it. */
    final ByteBuffer view = bytes.duplicate();
    /** The writer's, for {@link LoopbackEndpoint#claim}: positioned at a claimed region, written with absolute puts. */
    final ByteBuffer claims = bytes.duplicate();
}
