package org.rds4j.transport.loopback;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/** The JVM-wide table of loopback listeners: which stack accepts connections at which address and port. */
final class LoopbackFabric {
    private static final Map<InetSocketAddress, LoopbackInstance> LISTENERS = new ConcurrentHashMap<>();

    private LoopbackFabric() {
    }

    /** Registers a listener; false if another stack of this JVM already listens there. */
    static boolean listen(InetAddress address, int port, LoopbackInstance instance) {
        LoopbackInstance prior = LISTENERS.putIfAbsent(new InetSocketAddress(address, port), instance);
        return prior == null || prior == instance;
    }

    static void unlisten(InetAddress address, int port, LoopbackInstance instance) {
        LISTENERS.remove(new InetSocketAddress(address, port), instance);
    }

    static LoopbackInstance listener(InetAddress address, int port) {
        return LISTENERS.get(new InetSocketAddress(address, port));
    }
}
