package org.rds4j.core.path;

import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicReference;
import org.rds4j.core.cong.CongestionMap;

/**
 * The buffer a congestion map being received is read into, one per connection and shared by its paths (a map per
 * path would cost 8 KiB each on an idle connection). A path that finds it taken, by another path receiving a map at
 * the same moment, uses a buffer of its own.
 */
final class MapScratch {
    private final AtomicReference<ByteBuffer> spare = new AtomicReference<>();

    /** The connection's buffer if free, else a new one; cleared. */
    ByteBuffer take() {
        ByteBuffer b = spare.getAndSet(null);
        return b != null ? b.clear() : ByteBuffer.allocate(CongestionMap.BYTES);
    }

    /** Gives back a buffer from {@link #take}. */
    void give(ByteBuffer b) {
        spare.set(b);
    }
}
