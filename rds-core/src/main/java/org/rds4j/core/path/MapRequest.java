package org.rds4j.core.path;

/**
 * A path's request to send our congestion map: raised by any thread after it changed the map (under the map's
 * monitor), taken by the path's owner before it copies the map (under the same monitor). Lowering before the copy is
 * what keeps every change: a change whose raise the owner lowered is in the copy that follows, and a change made
 * after the copy raises the flag again for the next pass.
 */
final class MapRequest {
    private volatile boolean raised;

    /** Any thread, after changing the map. */
    void raise() {
        raised = true;
    }

    /** Whether a map waits to be sent. */
    boolean raised() {
        return raised;
    }

    /**
     * The owner, before it copies the map.
     *
     * @return true if a map was requested: the caller copies it now
     */
    boolean take() {
        if (!raised) {
            return false;
        }
        raised = false;
        return true;
    }
}
