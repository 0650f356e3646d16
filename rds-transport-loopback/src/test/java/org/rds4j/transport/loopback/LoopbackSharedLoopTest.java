package org.rds4j.transport.loopback;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.rds4j.RdsStackConfig;
import org.rds4j.core.spi.ConnectionHandler;
import org.rds4j.core.spi.FrameSink;
import org.rds4j.core.spi.TransportConnection;
import org.rds4j.core.spi.TransportInstance;

/**
 * The loop the loopback stacks of a JVM share ({@link LoopbackLoops}): both ends of a connection between two stacks
 * run on one thread; a stack that closes leaves the others' connections working; the thread ends with the last stack
 * that used it; a stack with {@code loopback.sharedLoop=false} keeps a thread of its own. Each test gives its stacks
 * an idle setting no other test uses, so that their shared loop is theirs alone even when stacks of other tests are
 * open in the same JVM.
 */
@Timeout(60)
class LoopbackSharedLoopTest {
    private ScheduledExecutorService timer;

    @BeforeEach
    void startTimer() {
        timer = Executors.newSingleThreadScheduledExecutor();
    }

    @AfterEach
    void stopTimer() {
        timer.shutdownNow();
    }

    @Test
    void bothEndsOfAConnectionRunOnTheOneSharedThreadWhichEndsWithTheLastStack() throws Exception {
        Receiver receiver = new Receiver();
        TransportInstance ta = open("shared-a", "77", "true", null);
        TransportInstance tb = open("shared-b", "77", "true", receiver);
        Sender sender = connect(ta, tb, "10.99.9.1", "10.99.9.2");
        assertTrue(receiver.got.await(20, TimeUnit.SECONDS), "the frame never arrived");
        Thread loop = sender.thread;
        assertSame(loop, receiver.thread, "the receiving end ran on " + receiver.thread.getName() + ", the sending end"
                + " on " + loop.getName());
        assertEquals("rds4j-loopback-yield77us", loop.getName());
        ta.close();
        assertTrue(loop.isAlive(), "the thread ended while stack shared-b still used it");
        tb.close();
        loop.join(10_000);
        assertFalse(loop.isAlive(), "the shared thread outlived the last stack using it");
    }

    @Test
    void aStackThatClosesLeavesTheOtherStacksConnectionsWorking() throws Exception {
        Receiver closing = new Receiver();
        Receiver staying = new Receiver();
        TransportInstance ta = open("left-a", "78", "true", null);
        TransportInstance tb = open("left-b", "78", "true", closing);
        TransportInstance tc = open("left-c", "78", "true", null);
        TransportInstance td = open("left-d", "78", "true", staying);
        try {
            connect(ta, tb, "10.99.9.3", "10.99.9.4");
            Sender open = connect(tc, td, "10.99.9.5", "10.99.9.6");
            assertTrue(closing.got.await(20, TimeUnit.SECONDS) && staying.got.await(20, TimeUnit.SECONDS),
                    "the first frames never arrived");
            assertSame(closing.thread, staying.thread);
            ta.close();
            tb.close();
            open.frames = 2;
            open.sink.get().requestTransmit();
            assertTrue(staying.gotSecond.await(20, TimeUnit.SECONDS), "a frame on a connection between stacks left"
                    + " open never arrived after two other stacks on their thread closed");
            assertTrue(staying.thread.isAlive());
        } finally {
            td.close();
            tc.close();
            tb.close();
            ta.close();
        }
    }

    @Test
    void aStackWithALoopOfItsOwnRunsItsEndsThere() throws Exception {
        Receiver receiver = new Receiver();
        TransportInstance ta = open("own-a", "79", "false", null);
        TransportInstance tb = open("own-b", "79", "false", receiver);
        try {
            Sender sender = connect(ta, tb, "10.99.9.6", "10.99.9.7");
            assertTrue(receiver.got.await(20, TimeUnit.SECONDS), "the frame never arrived");
            assertNotSame(sender.thread, receiver.thread);
            assertEquals("rds4j-own-a-loop", sender.thread.getName());
            assertEquals("rds4j-own-b-loop", receiver.thread.getName());
        } finally {
            tb.close();
            ta.close();
        }
    }

    @Test
    void aBadSharedLoopSettingIsRefusedNamingIt() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> open("bad-shared", "80", "sometimes", null));
        assertTrue(e.getMessage().contains("loopback.sharedLoop") && e.getMessage().contains("sometimes"),
                e.getMessage());
    }

    private TransportInstance open(String name, String yieldMicros, String shared, ConnectionHandler acceptor) {
        RdsStackConfig config = RdsStackConfig.builder().name(name).jmx(false)
                .property("loopback.yieldMicros", yieldMicros).property("loopback.sharedLoop", shared).build();
        return new LoopbackTransport().open(SpiHost.accepting(config, timer, acceptor));
    }

    /** Connects a {@link Sender} from {@code from} on {@code a} to {@code b} listening at {@code to}. */
    private static Sender connect(TransportInstance a, TransportInstance b, String from, String to) throws Exception {
        InetAddress there = InetAddress.getByName(to);
        b.listen(there);
        Sender sender = new Sender();
        a.connect(InetAddress.getByName(from), there, -1, sender);
        sender.sink.get(20, TimeUnit.SECONDS).requestTransmit();
        return sender;
    }

    /** Writes 16-byte frames until it has written {@link #frames}, and notes the thread that ran its passes. */
    private static final class Sender extends SpiHandler {
        final CompletableFuture<TransportConnection> sink = new CompletableFuture<>();
        volatile Thread thread;
        volatile int frames = 1;
        private int written;

        @Override
        public void onConnected(TransportConnection connection) {
            sink.complete(connection);
        }

        @Override
        public void transmit(FrameSink s) {
            thread = Thread.currentThread();
            for (; written < frames; written++) {
                s.write(ByteBuffer.allocate(16), ByteBuffer.allocate(0));
            }
        }
    }

    /** Takes the frames and notes the thread that delivered them. */
    private static final class Receiver extends SpiHandler {
        final CountDownLatch got = new CountDownLatch(1);
        final CountDownLatch gotSecond = new CountDownLatch(1);
        volatile Thread thread;
        private int bytes;

        @Override
        public void onBytes(ByteBuffer data) {
            bytes += data.remaining();
            data.position(data.limit());
            thread = Thread.currentThread();
            if (bytes >= 16) {
                got.countDown();
            }
            if (bytes >= 32) {
                gotSecond.countDown();
            }
        }
    }
}
