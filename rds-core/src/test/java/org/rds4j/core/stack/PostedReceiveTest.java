package org.rds4j.core.stack;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Arrays;
import java.util.Random;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.rds4j.EbadfException;
import org.rds4j.EtimedoutException;
import org.rds4j.RdsDatagram;
import org.rds4j.RdsMessageInfo;
import org.rds4j.RdsSocket;
import org.rds4j.RdsSocketOptions;
import org.rds4j.RdsStackConfig;
import org.rds4j.core.path.PostedBuffer;
import org.rds4j.core.spi.ReadTarget;
import org.rds4j.core.testkit.Seeds;
import org.rds4j.core.wire.RdsHeader;

/**
 * A reader blocked in {@code receive(ByteBuffer, info, 0)} lends its buffer, and a large message is decoded straight
 * into it ({@link PostedBuffer}); what must hold whatever ends the wait: the message is whole and in order, the
 * reader never returns while the I/O thread may still write into its buffer, and a message half in when the reader
 * leaves (a timeout, another message first, a close) arrives intact later.
 *
 * <p>The peer is the test itself through {@link FuzzTransport}: the test's thread is the I/O thread, so a message
 * can be fed in pieces with the reader parked in between, and what is in the reader's buffer after each piece is
 * seen exactly. Payloads are seeded; a failure names the seed.
 */
class PostedReceiveTest {
    private static final InetAddress PEER = address(10, 97, 0, 1);     // the smaller address: it connects to us
    private static final InetAddress LOCAL = address(10, 97, 0, 2);
    private static final int PORT = 4000;
    private static final int PEER_PORT = 7000;
    private static final int SIZE = 3 * PostedBuffer.MIN + 123;          // large enough to be decoded in place
    private static final Duration WAIT = Duration.ofSeconds(10);

    private final long seed = Seeds.seed();
    private final Random random = new Random(seed);
    private final ExecutorService readerThread = Executors.newSingleThreadExecutor();
    private CoreStack stack;
    private FuzzTransport transport;
    private FuzzTransport.Conn conn;
    private RdsSocket socket;
    private long nextSequence = 1;
    private int nextPeerPort = 50000;

    @BeforeEach
    void setUp() throws Exception {
        stack = new CoreStack(RdsStackConfig.builder().name("posted").address(LOCAL)
                .reconnectDelays(Duration.ofHours(1), Duration.ofHours(1)).paths(1).build());
        transport = FuzzTransport.install(stack);
        socket = stack.openSocket();
        socket.setOption(RdsSocketOptions.SO_RDS_TRANSPORT, FuzzTransport.NAME);
        socket.setOption(RdsSocketOptions.SO_RCVBUF, 8 * SIZE);
        socket.bind(new InetSocketAddress(LOCAL, PORT));
        accept();
    }

    @AfterEach
    void tearDown() {
        readerThread.shutdownNow();
        stack.close();
    }

    @Test
    void aWaitingReadersBufferReceivesALargeMessageAsItArrives() throws Exception {
        byte[] payload = payload(SIZE);
        ByteBuffer dst = ByteBuffer.allocateDirect(SIZE + 100).position(10);
        RdsMessageInfo info = new RdsMessageInfo();
        Future<Integer> got = receiveInBackground(dst, info);
        ByteBuffer rest = feedPart(frame(nextSequence++, 0, payload), PostedBuffer.MIN);
        // The reader is still waiting, and the first bytes are already where it will find them.
        assertFirstBytesLent(got, payload, dst, 10, "the payload goes into the reader's own buffer as it arrives");
        conn.feed(rest);
        assertEquals(SIZE, got.get(WAIT.toSeconds(), TimeUnit.SECONDS));
        assertEquals(10 + SIZE, dst.position());
        assertArrayEquals(payload, bytes(dst, 10, SIZE), seeded("the message as sent"));
        assertEquals(RdsDatagram.Kind.DATA, info.kind());
        assertEquals(SIZE, info.length());
        assertEquals(new InetSocketAddress(PEER, PEER_PORT), info.source());
        assertFalse(info.truncated());
    }

    @Test
    void aReaderThatTimesOutMidMessageLeavesItToArriveWholeLater() throws Exception {
        socket.setOption(RdsSocketOptions.SO_RCVTIMEO, Duration.ofMillis(300));
        byte[] payload = payload(SIZE);
        ByteBuffer dst = ByteBuffer.allocate(SIZE);
        Future<Integer> got = receiveInBackground(dst, new RdsMessageInfo());
        ByteBuffer rest = feedPart(frame(nextSequence++, 0, payload), SIZE / 2);
        assertTimedOut(got, dst);
        conn.feed(rest);
        assertMessage(payload, socket.receive(WAIT).orElseThrow());
    }

    @Test
    void aDuplicateGoingIntoTheBufferIsDroppedAndTheNextMessageTakesItsPlace() throws Exception {
        byte[] first = payload(SIZE);
        byte[] second = payload(SIZE);
        conn.feed(frame(nextSequence++, 0, first));
        assertMessage(first, socket.receive(WAIT).orElseThrow());
        ByteBuffer dst = ByteBuffer.allocate(SIZE);
        Future<Integer> got = receiveInBackground(dst, new RdsMessageInfo());
        conn.feed(frame(nextSequence - 1, RdsHeader.FLAG_RETRANSMITTED, first));   // resent after a reset: a duplicate
        assertFalse(got.isDone(), seeded("a duplicate is not delivered"));
        conn.feed(frame(nextSequence++, 0, second));
        assertEquals(SIZE, got.get(WAIT.toSeconds(), TimeUnit.SECONDS));
        assertArrayEquals(second, bytes(dst, 0, SIZE), seeded("the message after the duplicate"));
    }

    @Test
    void aConnectionLostMidMessageGivesTheBufferBackToTheWaitingReader() throws Exception {
        byte[] lost = payload(SIZE);
        byte[] next = payload(SIZE);
        ByteBuffer dst = ByteBuffer.allocate(SIZE);
        Future<Integer> got = receiveInBackground(dst, new RdsMessageInfo());
        feedPart(frame(nextSequence, 0, lost), SIZE / 3);
        conn.finish(null);                                  // the peer goes away; it resends on a new connection
        accept();
        ByteBuffer rest = feedPart(frame(nextSequence++, 0, next), PostedBuffer.MIN);
        assertFirstBytesLent(got, next, dst, 0, "the buffer is lent again, to the new connection's message");
        conn.feed(rest);
        assertEquals(SIZE, got.get(WAIT.toSeconds(), TimeUnit.SECONDS));
        assertArrayEquals(next, bytes(dst, 0, SIZE), seeded("the message sent on the new connection"));
    }

    @Test
    void aMessageQueuedMeanwhileComesFirstAndTheOneHalfInArrivesWholeAfterIt() throws Exception {
        byte[] remote = payload(SIZE);
        byte[] local = payload(1000);
        ByteBuffer dst = ByteBuffer.allocate(SIZE);
        RdsMessageInfo info = new RdsMessageInfo();
        Future<Integer> got = receiveInBackground(dst, info);
        ByteBuffer rest = feedPart(frame(nextSequence++, 0, remote), SIZE / 2);
        // A socket of the same stack sends meanwhile: its message is queued, and the reader returns it.
        try (RdsSocket other = stack.openSocket()) {
            other.setOption(RdsSocketOptions.SO_RDS_TRANSPORT, FuzzTransport.NAME);
            other.bind(new InetSocketAddress(LOCAL, PORT + 1));
            other.send(ByteBuffer.wrap(local), socket.localAddress());
            assertEquals(local.length, got.get(WAIT.toSeconds(), TimeUnit.SECONDS));
            assertArrayEquals(local, bytes(dst, 0, local.length));
            assertEquals(other.localAddress(), info.source());
        }
        conn.feed(rest);
        assertMessage(remote, socket.receive(WAIT).orElseThrow());
    }

    @Test
    void aSocketClosedMidMessageEndsTheWaitAndTheRestOfTheMessageIsDropped() throws Exception {
        byte[] payload = payload(SIZE);
        ByteBuffer dst = ByteBuffer.allocate(SIZE);
        Future<Integer> got = receiveInBackground(dst, new RdsMessageInfo());
        ByteBuffer rest = feedPart(frame(nextSequence++, 0, payload), SIZE / 2);
        socket.close();
        ExecutionException e = assertThrows(ExecutionException.class, () -> got.get(WAIT.toSeconds(), TimeUnit.SECONDS));
        assertTrue(e.getCause() instanceof EbadfException, seeded("closed: " + e.getCause()));
        conn.feed(rest);                                    // the rest goes into the arrival, which nobody queues
        assertEquals(1, counter("recv_drop_dead_sock"), "the message counts as dropped for a closed socket");
    }

    @Test
    void aLargeMessageBehindASmallOneOfTheSameReadIsNotReceivedBeforeIt() throws Exception {
        byte[] small = payload(1000);
        byte[] large = payload(SIZE);
        ByteBuffer both = ByteBuffer.allocate(2 * RdsHeader.SIZE + small.length + SIZE);
        both.put(frame(nextSequence++, 0, small)).put(frame(nextSequence++, 0, large)).flip();
        ByteBuffer dst = ByteBuffer.allocate(SIZE);
        Future<Integer> got = receiveInBackground(dst, new RdsMessageInfo());
        conn.feed(both);                                     // one read: the small message is gathered first
        assertEquals(small.length, got.get(WAIT.toSeconds(), TimeUnit.SECONDS), seeded("the first message first"));
        assertArrayEquals(small, bytes(dst, 0, small.length));
        assertMessage(large, socket.receive(WAIT).orElseThrow());
    }

    @Test
    void smallMessagesAndSmallBuffersAreCopiedAsBefore() throws Exception {
        byte[] small = payload(1000);
        ByteBuffer dst = ByteBuffer.allocate(SIZE);
        Future<Integer> got = receiveInBackground(dst, new RdsMessageInfo());
        conn.feed(frame(nextSequence++, 0, small));
        assertEquals(small.length, got.get(WAIT.toSeconds(), TimeUnit.SECONDS));
        assertArrayEquals(small, bytes(dst, 0, small.length));

        byte[] large = payload(SIZE);
        ByteBuffer tooSmall = ByteBuffer.allocate(SIZE - 1);        // truncates: not lent, the message is copied
        RdsMessageInfo info = new RdsMessageInfo();
        Future<Integer> truncated = receiveInBackground(tooSmall, info);
        conn.feed(frame(nextSequence++, 0, large));
        assertEquals(SIZE - 1, truncated.get(WAIT.toSeconds(), TimeUnit.SECONDS));
        assertTrue(info.truncated());
        assertArrayEquals(Arrays.copyOf(large, SIZE - 1), bytes(tooSmall, 0, SIZE - 1));
    }

    @Test
    void aSocketReadGoesStraightIntoTheWaitingReadersDirectBuffer() throws Exception {
        byte[] payload = payload(SIZE);
        ByteBuffer dst = ByteBuffer.allocateDirect(SIZE + 100).position(10);
        Future<Integer> got = receiveInBackground(dst, new RdsMessageInfo());
        ByteBuffer rest = feedPart(frame(nextSequence++, 0, payload), PostedBuffer.MIN);
        ReadTarget t = conn.beginReadInPlace();
        assertTrue(t != null && t.memory() == dst, seeded("the read target is the reader's own buffer"));
        assertEquals(SIZE - PostedBuffer.MIN, t.bytes(), "the rest of the payload, no more");
        assertEquals(10 + PostedBuffer.MIN, dst.position(), "where the next payload byte goes");
        conn.endReadInPlace(t, rest, 1000);
        assertFalse(got.isDone(), seeded("the message is not whole yet"));
        assertEquals(SIZE - PostedBuffer.MIN - 1000, conn.feedInPlace(rest), "the rest is read in place");
        assertEquals(SIZE, got.get(WAIT.toSeconds(), TimeUnit.SECONDS));
        assertEquals(10 + SIZE, dst.position());
        assertArrayEquals(payload, bytes(dst, 10, SIZE), seeded("the message as sent"));
    }

    @Test
    void aReaderTimingOutWhileASocketReadGoesIntoItsBufferLeavesOnlyWhenTheReadIsOver() throws Exception {
        socket.setOption(RdsSocketOptions.SO_RCVTIMEO, Duration.ofMillis(100));
        byte[] payload = payload(SIZE);
        ByteBuffer dst = ByteBuffer.allocateDirect(SIZE);
        Future<Integer> got = receiveInBackground(dst, new RdsMessageInfo());
        ByteBuffer rest = feedPart(frame(nextSequence++, 0, payload), PostedBuffer.MIN);
        ReadTarget t = conn.beginReadInPlace();                 // a read into the reader's buffer is under way
        assertTrue(t != null && t.memory() == dst, seeded("the read target is the reader's own buffer"));
        assertThrows(TimeoutException.class, () -> got.get(600, TimeUnit.MILLISECONDS),
                seeded("the reader timed out meanwhile, but must not leave while the read may write its buffer"));
        conn.endReadInPlace(t, rest, 5000);
        assertTimedOut(got, dst);
        ReadTarget next = conn.beginReadInPlace();
        assertTrue(next != null && next.memory() != dst && next.memory().isDirect(),
                seeded("the rest is read into the message's own buffer, where the reader left the bytes so far"));
        conn.endReadInPlace(next, rest, 0);
        conn.feedInPlace(rest);
        assertMessage(payload, socket.receive(WAIT).orElseThrow());
    }

    @Test
    void aLargeMessageNobodyWaitsForIsReadIntoItsOwnBuffer() throws Exception {
        byte[] payload = payload(SIZE);
        ByteBuffer rest = feedPart(frame(nextSequence++, 0, payload), 100);
        assertEquals(SIZE - 100, conn.feedInPlace(rest), "all but the first read goes in place");
        assertMessage(payload, socket.receive(WAIT).orElseThrow());
        byte[] small = payload(1000);
        assertEquals(0, conn.feedInPlace(frame(nextSequence++, 0, small)), "a small message is copied");
        assertMessage(small, socket.receive(WAIT).orElseThrow());
    }

    // ------------------------------------------------------------------------------------------------ helpers

    /** Starts a blocking receive into {@code dst} and returns once the reader is parked (its buffer posted). */
    private Future<Integer> receiveInBackground(ByteBuffer dst, RdsMessageInfo info) {
        Thread[] reader = new Thread[1];
        Future<Integer> f = readerThread.submit(() -> {
            reader[0] = Thread.currentThread();
            return socket.receive(dst, info, 0);
        });
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (reader[0] == null || reader[0].getState() == Thread.State.RUNNABLE) {
            if (f.isDone() || System.nanoTime() - deadline > 0) {
                fail(seeded("the reader never waited"));
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
        }
        return f;
    }

    /** The receive ended with ETIMEDOUT and left {@code dst}'s position at 0, where it was. */
    private void assertTimedOut(Future<Integer> got, ByteBuffer dst) {
        ExecutionException e = assertThrows(ExecutionException.class, () -> got.get(WAIT.toSeconds(), TimeUnit.SECONDS));
        assertTrue(e.getCause() instanceof EtimedoutException, seeded("timed out: " + e.getCause()));
        assertEquals(0, dst.position(), "a receive that timed out leaves the position where it was");
    }

    /** Feeds {@code frame}'s header and the first {@code payloadBytes} of its payload; returns the rest. */
    private ByteBuffer feedPart(ByteBuffer frame, int payloadBytes) {
        int cut = RdsHeader.SIZE + payloadBytes;
        conn.feed(frame.duplicate().limit(cut));
        return frame.position(cut);
    }

    /** The reader still waits, and the first {@link PostedBuffer#MIN} bytes are in its buffer from {@code at}. */
    private void assertFirstBytesLent(Future<Integer> got, byte[] payload, ByteBuffer dst, int at, String what) {
        assertFalse(got.isDone(), seeded("the message is not whole yet"));
        assertArrayEquals(Arrays.copyOf(payload, PostedBuffer.MIN), bytes(dst, at, PostedBuffer.MIN), seeded(what));
    }

    private void accept() {
        conn = transport.accept(new InetSocketAddress(LOCAL, 16385), new InetSocketAddress(PEER, nextPeerPort++));
        assertTrue(conn != null, "the stack accepts the peer's connection");
    }

    private ByteBuffer frame(long sequence, int flags, byte[] payload) {
        RdsHeader h = new RdsHeader().sequence(sequence).flags(flags).sourcePort(PEER_PORT).destinationPort(PORT)
                .length(payload.length);
        ByteBuffer b = ByteBuffer.allocate(RdsHeader.SIZE + payload.length);
        h.encode(b);
        return b.put(payload).flip();
    }

    private byte[] payload(int size) {
        byte[] p = new byte[size];
        random.nextBytes(p);
        return p;
    }

    private static byte[] bytes(ByteBuffer b, int from, int length) {
        byte[] out = new byte[length];
        b.get(from, out);
        return out;
    }

    private void assertMessage(byte[] expected, RdsDatagram d) {
        assertEquals(RdsDatagram.Kind.DATA, d.kind());
        assertEquals(new InetSocketAddress(PEER, PEER_PORT), d.source());
        byte[] got = new byte[d.length()];
        d.payload().get(got);
        assertArrayEquals(expected, got, seeded("the message as sent"));
    }

    private long counter(String name) {
        Long v = stack.counters().get(name);
        assertTrue(v != null, "no counter " + name);
        return v;
    }

    private String seeded(String what) {
        return what + " (seed " + seed + ")";
    }

    private static InetAddress address(int a, int b, int c, int d) {
        try {
            return InetAddress.getByAddress(new byte[] {(byte) a, (byte) b, (byte) c, (byte) d});
        } catch (UnknownHostException e) {
            throw new AssertionError(e);
        }
    }
}
