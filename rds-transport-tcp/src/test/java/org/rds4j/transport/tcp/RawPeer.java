package org.rds4j.transport.tcp;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.rds4j.RdsConnectionInfo;
import org.rds4j.RdsStack;
import org.rds4j.RdsStackConfig;

/**
 * What the hostile-peer tests share: a plain TCP connection from a loopback address of the test's choosing, over
 * which the test writes RDS frames it encodes itself, and a bounded wait for what the victim stack does about it.
 */
final class RawPeer {
    private RawPeer() {
    }

    /** Connects from {@code from} (an ephemeral port) to the stack listening at {@code to:tcpPort}. */
    static SocketChannel connect(InetAddress from, InetAddress to, int tcpPort) throws IOException {
        SocketChannel ch = SocketChannel.open();
        try {
            connect(ch, from, to, tcpPort);
        } catch (IOException e) {
            ch.close();
            throw e;
        }
        return ch;
    }

    /** Binds {@code ch} to {@code from} (an ephemeral port) and connects it to {@code to:tcpPort}. */
    static void connect(SocketChannel ch, InetAddress from, InetAddress to, int tcpPort) throws IOException {
        ch.bind(new InetSocketAddress(from, 0));
        ch.connect(new InetSocketAddress(to, tcpPort));
    }

    /** The settings of the stack a raw peer connects to: {@code address} on {@code tcpPort}, over TCP, without JMX. */
    static RdsStackConfig.Builder victim(InetAddress address, int tcpPort) {
        return RdsStackConfig.builder().name("victim").address(address).tcpPort(tcpPort).defaultTransport("tcp")
                .jmx(false);
    }

    /** Writes all of {@code bufs} on a blocking channel. */
    static void writeFully(SocketChannel ch, ByteBuffer... bufs) throws IOException {
        long left = 0;
        for (ByteBuffer b : bufs) {
            left += b.remaining();
        }
        while (left > 0) {
            left -= ch.write(bufs);
        }
    }

    /**
     * The stack's connection to the raw peer at 127.0.0.1. It is there once the stack has read from the peer (the
     * tests read something first).
     */
    static RdsConnectionInfo connectionFromPeer(RdsStack stack) {
        return stack.info().connections().stream()
                .filter(c -> c.peer().getHostAddress().equals("127.0.0.1"))
                .findFirst().orElseThrow(() -> new AssertionError("no connection from the peer: " + stack.info()));
    }

    /** Waits until {@code condition} holds, looking every few milliseconds; fails after {@code timeout}. */
    static void await(BooleanSupplier condition, Duration timeout, Supplier<String> what) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("timed out waiting until " + what.get());
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
        }
    }
}
