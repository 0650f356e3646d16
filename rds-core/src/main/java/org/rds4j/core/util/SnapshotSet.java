package org.rds4j.core.util;

import java.util.function.IntFunction;

/**
 * A set that any thread may walk without a lock and without allocating: its members are one array, replaced whole
 * under a lock when a member joins or leaves. For sets that change rarely and are walked often: a stack's sockets
 * and connections, walked for every congestion map that arrives or is sent, which under load can be every message
 * (a 1 MiB message fills a default receive budget, so each one turns its port congested and back). A concurrent map's
 * iterator was an object per walk.
 *
 * @param <T> the members' type, compared by identity
 */
public final class SnapshotSet<T> {
    private final IntFunction<T[]> newArray;
    private volatile T[] members;

    /**
     * An empty set.
     *
     * @param newArray makes an array of the members' type, e.g. {@code CoreSocket[]::new}
     */
    public SnapshotSet(IntFunction<T[]> newArray) {
        this.newArray = newArray;
        this.members = newArray.apply(0);
    }

    /**
     * Adds a member, if not there already.
     *
     * @param t the new member
     * @return whether it was added
     */
    public synchronized boolean add(T t) {
        T[] old = members;
        for (T m : old) {
            if (m == t) {
                return false;
            }
        }
        T[] now = newArray.apply(old.length + 1);
        System.arraycopy(old, 0, now, 0, old.length);
        now[old.length] = t;
        members = now;
        return true;
    }

    /**
     * Removes a member, if there.
     *
     * @param t the member to remove
     * @return whether it was there
     */
    public synchronized boolean remove(T t) {
        T[] old = members;
        for (int i = 0; i < old.length; i++) {
            if (old[i] == t) {
                T[] now = newArray.apply(old.length - 1);
                System.arraycopy(old, 0, now, 0, i);
                System.arraycopy(old, i + 1, now, i, old.length - i - 1);
                members = now;
                return true;
            }
        }
        return false;
    }

    /**
     * The members at one moment: the set's own array, which the caller must not change.
     *
     * @return the members
     */
    public T[] members() {
        return members;
    }
}
