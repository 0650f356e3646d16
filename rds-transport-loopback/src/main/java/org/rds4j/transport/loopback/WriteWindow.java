package org.rds4j.transport.loopback;

/**
 * How far the peer has consumed one end's stream, and whether that end's writer stopped for room: the writer (the
 * end's own thread) checks for room before each frame; the peer's thread reports what it consumed and, when the
 * writer waits and the peer took its stream down to half the high-water mark, tells the caller to ask for a pass.
 *
 * <p>No wake-up is lost: the writer raises its flag, then looks at the consumed offset again; the peer writes the
 * offset, then reads the flag. Both are volatile, so one of them sees the other's write: either the writer finds the
 * room on its second look, or the peer finds the writer waiting. (Reading the offset once before raising the flag
 * left a writer stopped when the peer consumed everything between the two: nothing asked for its next pass.)
 */
final class WriteWindow {
    /** Bytes of the stream the peer has consumed; written by the peer's thread. */
    private volatile long consumed;
    /** The writer found no room and waits to be asked for a pass. */
    private volatile boolean waiting;

    /** The bytes the peer has consumed. */
    long consumed() {
        return consumed;
    }

    /**
     * Whether the writer may write more, with {@code written} bytes of the stream written. The writer's thread.
     *
     * @return {@code true} if fewer than {@code highWaterMark} bytes are unconsumed; if not, the writer is marked
     *     waiting and the peer's next report that frees enough room asks for a pass
     */
    boolean hasRoom(long written, long highWaterMark) {
        if (written - consumed < highWaterMark) {
            return true;
        }
        waiting = true;
        if (written - consumed < highWaterMark) {     // consumed meanwhile, before the peer could see the flag
            waiting = false;
            return true;
        }
        return false;
    }

    /**
     * The peer consumed the stream up to {@code offset}. The peer's thread.
     *
     * @param written what the writer has written, as this thread last saw it (it only grows)
     * @return whether the writer waited and now has room (under half the high-water mark): ask for a pass
     */
    boolean consumed(long offset, long written, long highWaterMark) {
        consumed = offset;
        if (waiting && written - offset < highWaterMark / 2) {
            waiting = false;
            return true;
        }
        return false;
    }
}
