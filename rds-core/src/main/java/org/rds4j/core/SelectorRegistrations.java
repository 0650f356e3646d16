package org.rds4j.core;

import java.util.Arrays;

/**
 * The selectors one socket is registered with. Copied on write, so that the message path, which signals them after
 * every delivery and release batch, reads them with one volatile load and no lock.
 */
final class SelectorRegistrations {
    private static final CoreSelector.Registration[] NONE = {};

    private volatile CoreSelector.Registration[] all = NONE;

    synchronized void add(CoreSelector.Registration r) {
        CoreSelector.Registration[] old = all;
        CoreSelector.Registration[] grown = Arrays.copyOf(old, old.length + 1);
        grown[old.length] = r;
        all = grown;
    }

    synchronized void remove(CoreSelector.Registration r) {
        all = Arrays.stream(all).filter(x -> x != r).toArray(CoreSelector.Registration[]::new);
    }

    /** Something changed that may make the socket ready: tell every selector it is registered with. */
    void signal() {
        for (CoreSelector.Registration r : all) {
            r.signal();
        }
    }
}
