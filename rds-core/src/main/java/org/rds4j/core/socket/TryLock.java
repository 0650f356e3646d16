package org.rds4j.core.socket;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * A lock that is only ever tried, never waited for: a thread that finds it held does something else (a sender whose
 * socket's run is being appended to by another thread sends the ordinary way). Taken by compare-and-set, given back
 * with release semantics, so what the holder wrote is seen by the next holder.
 */
final class TryLock {
    private static final VarHandle BUSY;

    static {
        try {
            BUSY = MethodHandles.lookup().findVarHandle(TryLock.class, "busy", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    @SuppressWarnings("unused")        // through BUSY
    private volatile int busy;

    /** @return true if the caller now holds the lock; it must then {@link #unlock} */
    boolean tryLock() {
        return BUSY.compareAndSet(this, 0, 1);
    }

    /** Gives back the lock; only its holder calls this. */
    void unlock() {
        BUSY.setRelease(this, 0);
    }
}
