package org.rds4j.transport.loopback;

/**
 * What one transmit pass handed the other end: a region of a chunk of the writer's. Several passes fill one 64 KiB
 * chunk, so a pass of one small message costs no chunk and no copy; the segment that ends a chunk gives the chunk
 * back to the writer's pool once read (segments are read in order, so every earlier one of that chunk is read by
 * then). Pooled like the chunks: steady traffic allocates nothing.
 */
final class Segment {
    Chunk chunk;
    int from;
    int to;
    /** Reading this segment finishes the chunk: give it back. */
    boolean lastOfChunk;
    long endOffset;
}
