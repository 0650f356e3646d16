package org.rds4j.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.rds4j.transport.tcp.CallerIoTest.counter;
import static org.rds4j.transport.tcp.CallerIoTest.echo;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.rds4j.RdsMessageInfo;
import org.rds4j.RdsSocket;
import org.rds4j.RdsStack;
import org.rds4j.RdsStackConfig;

/**
 * {@code tcp.callerIo} without busy-poll: a reader waiting for a reply reads the path's socket itself while it yields,
 * a reply writes itself when nothing else waits to be read, and everything else stays on the I/O threads
 * (docs/threading.md). The readers here yield for up to a second, so that every wait for a reply does so
 * however busy the machine is; {@code caller_reads} and {@code caller_passes} count what the callers did.
 */
@Timeout(120)
class ReplyCallerIoTest {
    private final List<AutoCloseable> opened = new ArrayList<>();

    @AfterEach
    void close() throws Exception {
        for (int i = opened.size() - 1; i >= 0; i--) {
            opened.get(i).close();
        }
        LeakRecorder.assertNoLeaks();
    }

    private <T extends AutoCloseable> T keep(T c) {
        opened.add(c);
        return c;
    }

    private RdsStack stack(String name, String address, int port) throws Exception {
        return keep(RdsStack.create(RdsStackConfig.builder().name(name).address(InetAddress.getByName(address))
                .tcpPort(port).defaultTransport("tcp").replySpin(Duration.ofSeconds(1))
                .property("tcp.callerIo", "true").build()));
    }

    /** Two stacks, 127.0.0.1 and 127.0.0.2 on one free TCP port, with a socket on each. */
    private record Pair(RdsStack stackA, RdsStack stackB, RdsSocket a, RdsSocket b) {
    }

    private Pair pair(String name) throws Exception {
        int port = TcpHosts.freePort();
        RdsStack sa = stack(name + "-a", "127.0.0.1", port);
        RdsStack sb = stack(name + "-b", "127.0.0.2", port);
        return new Pair(sa, sb, socket(sa, "127.0.0.1", 0), socket(sb, "127.0.0.2", 0));
    }

    private RdsSocket socket(RdsStack stack, String address, int port) throws Exception {
        RdsSocket s = keep(stack.openSocket());
        s.bind(new InetSocketAddress(InetAddress.getByName(address), port));
        return s;
    }

    /** One request out, its reply awaited: both sides' readers read, and the replies write themselves. */
    @Test
    void aReplyIsReadAndWrittenByTheThreadsWaitingForIt() throws Exception {
        Pair p = pair("reply");
        RdsStack sa = p.stackA();
        RdsStack sb = p.stackB();
        RdsSocket a = p.a();
        RdsSocket b = p.b();
        int n = 2000;
        CompletableFuture<Void> echo = echo(b, n, 1024);
        ByteBuffer out = ByteBuffer.allocateDirect(1024);
        ByteBuffer in = ByteBuffer.allocateDirect(1024);
        RdsMessageInfo info = new RdsMessageInfo();
        for (int i = 0; i < n; i++) {
            int len = 1 + i % 1024;
            out.clear();
            for (int k = 0; k < len; k++) {
                out.put((byte) (i + k));
            }
            out.flip();
            a.send(out, b.localAddress());
            in.clear();
            assertEquals(len, a.receive(in, info, 0), "the length of reply " + i);
            for (int k = 0; k < len; k++) {
                assertEquals((byte) (i + k), in.get(k), "byte " + k + " of reply " + i);
            }
        }
        echo.get(60, TimeUnit.SECONDS);
        // The requester's first wait and the echo's waits before a first reply are no waits for a reply; nearly all
        // the others are.
        for (RdsStack s : List.of(sa, sb)) {
            assertTrue(counter(s, "caller_reads") > n / 2, s + " read in the waiting thread: "
                    + counter(s, "caller_reads") + " of " + n);
            assertTrue(counter(s, "caller_passes") > n / 2, s + " wrote the replies in their own thread: "
                    + counter(s, "caller_passes") + " of " + n);
        }
    }

    /**
     * Two requests out before either reply is awaited, a window as {@code ./rds4j stress} keeps one: the reader waiting
     * for their replies reads the path's socket itself as well, and the replies arrive once each, in order.
     */
    @Test
    void aReaderWithAWindowOfRequestsOutReadsToo() throws Exception {
        Pair p = pair("window");
        RdsStack sa = p.stackA();
        RdsStack sb = p.stackB();
        RdsSocket a = p.a();
        RdsSocket b = p.b();
        int n = 2000;
        CompletableFuture<Void> echo = echo(b, n, 64);
        ByteBuffer buf = ByteBuffer.allocateDirect(64);
        RdsMessageInfo info = new RdsMessageInfo();
        for (int i = 0; i < n; i += 2) {
            for (int k = i; k < i + 2; k++) {
                buf.clear();
                buf.putInt(0, k);
                a.send(buf, b.localAddress());
            }
            for (int k = i; k < i + 2; k++) {
                buf.clear();
                assertEquals(64, a.receive(buf, info, 0), "the length of reply " + k);
                assertEquals(k, buf.getInt(0), "reply " + k + " in order");
            }
        }
        echo.get(60, TimeUnit.SECONDS);
        // Each pair's first wait follows two sends; its second follows none and is no wait for a reply.
        assertTrue(counter(sa, "caller_reads") > 0, "the requester read in its own thread with two requests out");
    }

    /**
     * A one-way stream has nobody waiting for a reply: its sender's sends and its receiver's reads stay on the I/O
     * threads, and every message arrives once, in order.
     */
    @Test
    void aStreamStaysOnTheIoThreads() throws Exception {
        Pair p = pair("stream");
        RdsStack sa = p.stackA();
        RdsStack sb = p.stackB();
        RdsSocket a = p.a();
        RdsSocket b = p.b();
        int n = 20_000;
        CompletableFuture<Void> sender = CompletableFuture.runAsync(() -> {
            ByteBuffer out = ByteBuffer.allocateDirect(256);
            try {
                for (int i = 0; i < n; i++) {
                    out.clear();
                    out.putInt(0, i);
                    out.limit(4 + i % 252);
                    a.send(out, b.localAddress());
                }
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        });
        ByteBuffer in = ByteBuffer.allocateDirect(256);
        RdsMessageInfo info = new RdsMessageInfo();
        for (int i = 0; i < n; i++) {
            in.clear();
            assertEquals(4 + i % 252, b.receive(in, info, 0), "the length of message " + i);
            assertEquals(i, in.getInt(0), "message " + i + " in order");
        }
        sender.get(60, TimeUnit.SECONDS);
        for (RdsStack s : List.of(sa, sb)) {
            assertEquals(0, counter(s, "caller_reads"), s + ": nobody waited for a reply, so nobody read");
            assertEquals(0, counter(s, "caller_passes"), s + ": nobody replied, so nobody wrote");
        }
    }

    /**
     * After a requester stops, the path its reader read carries messages for a socket that never polls (it never
     * sent, so its receive parks at once): reading goes back to the I/O thread, and they arrive, in order. Both
     * sockets' ports are on the same path, as the replier sends to both from one socket.
     */
    @Test
    void messagesForASocketThatDoesNotPollArriveAfterTheReaderStops() throws Exception {
        int port = TcpHosts.freePort();
        RdsStack sa = stack("leave-a", "127.0.0.1", port);
        RdsStack sb = stack("leave-b", "127.0.0.2", port);
        RdsSocket requester = socket(sa, "127.0.0.1", 0);
        RdsSocket quiet = socket(sa, "127.0.0.1", 0);
        RdsSocket b = socket(sb, "127.0.0.2", 0);
        ByteBuffer buf = ByteBuffer.allocateDirect(64);
        RdsMessageInfo info = new RdsMessageInfo();
        for (int round = 0; round < 5; round++) {
            int n = 200;
            CompletableFuture<Void> echo = echo(b, n, 64);
            for (int i = 0; i < n; i++) {
                buf.clear();
                buf.putInt(0, i);
                requester.send(buf, b.localAddress());
                buf.clear();
                requester.receive(buf, info, 0);
                assertEquals(i, buf.getInt(0), "round " + round + ", reply " + i);
            }
            echo.get(60, TimeUnit.SECONDS);
            for (int i = 0; i < 10; i++) {
                buf.clear();
                buf.putInt(0, round * 10 + i);
                b.send(buf, quiet.localAddress());
            }
            for (int i = 0; i < 10; i++) {
                buf.clear();
                assertEquals(64, quiet.receive(buf, info, 0));
                assertEquals(round * 10 + i, buf.getInt(0), "round " + round + ": message " + i + " in order");
            }
        }
        assertTrue(counter(sa, "caller_reads") > 0, "the requester read in its own thread");
    }
}
