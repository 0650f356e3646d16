package org.rds4j.transport.tcp;

import java.net.InetAddress;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.Function;
import org.rds4j.RdsStackConfig;
import org.rds4j.core.spi.ConnectionHandler;
import org.rds4j.core.spi.TransportConnection;
import org.rds4j.core.spi.TransportHost;

/** A stand-in for the core: accepts (or refuses) connections with a function of the test's choosing. */
final class TestHost implements TransportHost, AutoCloseable {
    final RdsStackConfig config;
    final BlockingQueue<TransportConnection> acceptCalls = new LinkedBlockingQueue<>();
    final BlockingQueue<String> acceptThreads = new LinkedBlockingQueue<>();
    volatile Function<TransportConnection, ConnectionHandler> acceptor = c -> null;
    private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
    private final org.rds4j.core.spi.OffHeapMemory offHeap;

    TestHost(RdsStackConfig config) {
        this.config = config;
        this.offHeap = new org.rds4j.core.spi.OffHeapMemory(config.offHeapBytes());
    }

    static RdsStackConfig.Builder config(String name, int port) {
        return RdsStackConfig.builder().name(name).tcpPort(port);
    }

    static InetAddress addr(String s) {
        try {
            return InetAddress.getByName(s);
        } catch (java.net.UnknownHostException e) {
            throw new IllegalArgumentException(e);
        }
    }

    @Override
    public RdsStackConfig config() {
        return config;
    }

    @Override
    public ConnectionHandler accept(TransportConnection connection) {
        acceptThreads.add(Thread.currentThread().getName());
        acceptCalls.add(connection);
        return acceptor.apply(connection);
    }

    /** No allow-list here: every peer is admitted. */
    @Override
    public boolean admits(java.net.InetAddress peer) {
        return true;
    }

    /** TLS handshakes that failed, as the transport reported them. */
    final java.util.concurrent.atomic.AtomicInteger handshakesFailed = new java.util.concurrent.atomic.AtomicInteger();

    @Override
    public void tlsHandshakeFailed() {
        handshakesFailed.incrementAndGet();
    }

    @Override
    public ScheduledExecutorService scheduler() {
        return scheduler;
    }

    @Override
    public org.rds4j.core.spi.OffHeapMemory offHeap() {
        return offHeap;
    }

    @Override
    public void close() {
        scheduler.shutdownNow();
    }
}
