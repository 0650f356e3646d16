package org.rds4j.core.socket;

import org.rds4j.core.util.SnapshotSet;

/**
 * The selectors one socket is registered with. Copied on write ({@link SnapshotSet}), so that the message path,
 * which signals them after every delivery and release batch, reads them with one volatile load and no lock.
 */
final class SelectorRegistrations {
    private final SnapshotSet<CoreSelector.Registration> all = new SnapshotSet<>(CoreSelector.Registration[]::new);

    void add(CoreSelector.Registration r) {
        all.add(r);
    }

    void remove(CoreSelector.Registration r) {
        all.remove(r);
    }

    /** Something changed that may make the socket ready: tell every selector it is registered with. */
    void signal() {
        for (CoreSelector.Registration r : all.members()) {
            r.signal();
        }
    }
}
