package org.rds4j.core.path;

import java.net.InetAddress;
import java.net.InetSocketAddress;

/**
 * The source addresses of a peer's messages, one per port seen lately: steady traffic between a few ports then
 * allocates no address objects. Racy by design, written by whichever I/O thread decodes: a miss only costs an
 * allocation, and an {@code InetSocketAddress} is immutable, so a reader sees a whole one or none.
 */
final class SourceAddresses {
    private final InetAddress peer;
    private final InetSocketAddress[] cache = new InetSocketAddress[256];

    SourceAddresses(InetAddress peer) {
        this.peer = peer;
    }

    /** The address of the peer's {@code port}. */
    InetSocketAddress of(int port) {
        int slot = port & (cache.length - 1);
        InetSocketAddress a = cache[slot];
        if (a == null || a.getPort() != port) {
            a = new InetSocketAddress(peer, port);
            cache[slot] = a;
        }
        return a;
    }
}
