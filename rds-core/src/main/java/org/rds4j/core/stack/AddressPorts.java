package org.rds4j.core.stack;

import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * The ports of one local address, in pages of 256 made on first bind: a lookup is two array reads and no lock,
 * and an address costs a few KiB rather than a 64 Ki-entry table.
 */
final class AddressPorts {
    final AtomicReferenceArray<AtomicReferenceArray<Object>> pages = new AtomicReferenceArray<>(256);
    /** Sockets (not reserved ports) bound on this address; written under {@link BindTable}'s monitor. */
    volatile int sockets;

    Object get(int port) {
        AtomicReferenceArray<Object> page = pages.get(port >>> 8);
        return page == null ? null : page.get(port & 0xFF);
    }

    /** Under {@link BindTable}'s monitor. */
    boolean putIfAbsent(int port, Object owner) {
        AtomicReferenceArray<Object> page = pages.get(port >>> 8);
        if (page == null) {
            page = new AtomicReferenceArray<>(256);
            pages.set(port >>> 8, page);
        }
        return page.compareAndSet(port & 0xFF, null, owner);
    }

    /** Under {@link BindTable}'s monitor. */
    boolean replace(int port, Object expected, Object owner) {
        AtomicReferenceArray<Object> page = pages.get(port >>> 8);
        return page != null && page.compareAndSet(port & 0xFF, expected, owner);
    }

    /** Under {@link BindTable}'s monitor. */
    boolean remove(int port, Object owner) {
        AtomicReferenceArray<Object> page = pages.get(port >>> 8);
        return page != null && page.compareAndSet(port & 0xFF, owner, null);
    }
}
