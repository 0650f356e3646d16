package org.rds4j.core.stack;

import org.rds4j.core.socket.CoreSocket;
import org.rds4j.core.socket.ReceiveQueue;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import org.junit.jupiter.api.Test;
import org.rds4j.EagainException;
import org.rds4j.RdsDatagram;
import org.rds4j.RdsMessageInfo;
import org.rds4j.RdsSocket;
import org.rds4j.RdsSocketOptions;
import org.rds4j.RdsStackConfig;
import org.rds4j.core.path.Arrival;
import org.rds4j.core.wire.RdsHeader;

/**
 * Runs on the receiving side: the small messages one read decodes for one socket share one arrival, and readers take
 * them one at a time ({@link Arrival}, {@link ReceiveQueue}). Whatever the reads' cuts, the sizes around
 * {@link Arrival#RUN_ENTRY_MAX}, the duplicates among them and the way the reader takes them (into a buffer that may
 * truncate, as a datagram, after a peek, while later reads arrive), every message arrives once, whole, in order, with
 * its own source and length.
 *
 * <p>The peer is the test itself through {@link FuzzTransport}: the test's thread is the I/O thread, so each cut is a
 * read of its own. The property draws everything from one seed, which a failure names. One more test runs a peeking
 * reader against a taking one: a peek is copied under the queue's lock, like a run's message.
 */
class ReceiveRunTest {
    private static final InetAddress PEER = address(10, 98, 0, 1);     // the smaller address: it connects to us
    private static final InetAddress LOCAL = address(10, 98, 0, 2);
    private static final int PORT = 4000;
    private static final int[] PEER_PORTS = {7000, 7001, 7002};
    private static final Duration WAIT = Duration.ofSeconds(10);

    private record Sent(int sourcePort, byte[] payload) {
    }

    @Property(tries = 60)
    void everyMessageArrivesOnceWholeAndInOrderHoweverTheReadsAreCut(@ForAll long seed) throws Exception {
        Random random = new Random(seed);
        try (Peer peer = new Peer()) {
            List<Sent> expected = new ArrayList<>();
            ByteBuffer stream = peer.stream(random, 1 + random.nextInt(400), expected);
            ArrayDeque<Sent> queued = new ArrayDeque<>();
            int next = 0;
            int taken = 0;
            while (stream.hasRemaining()) {
                int cut = Math.min(stream.remaining(), 1 + random.nextInt(random.nextBoolean() ? 200 : 6000));
                int before = peer.decodedWhole(stream, cut, expected, next);
                peer.conn.feed(stream.duplicate().limit(stream.position() + cut));
                stream.position(stream.position() + cut);
                for (; next < before; next++) {
                    queued.add(expected.get(next));
                }
                // Take some of what is queued now, sometimes all: runs are taken part by part while reads go on.
                int k = random.nextInt(3) == 0 ? queued.size() : random.nextInt(queued.size() + 1);
                for (int i = 0; i < k; i++) {
                    peer.takeAndCheck(random, queued.poll(), taken++, seed);
                }
            }
            assertEquals(expected.size(), next, "every frame was fed whole (seed " + seed + ")");
            while (!queued.isEmpty()) {
                peer.takeAndCheck(random, queued.poll(), taken++, seed);
            }
            assertTrue(peer.socket.receive(Duration.ZERO).isEmpty(), "nothing more, no duplicate (seed " + seed + ")");
            assertEquals(expected.size(), peer.counter("recv_delivered"), "each delivery counted once");
            long bytes = expected.stream().mapToLong(s -> s.payload().length).sum();
            assertEquals(bytes, peer.counter("recv_bytes_freed_fromsock"), "each message's bytes counted once");
            // The socket kept its share of both; closing it hands the share to the stack's counters, once.
            peer.socket.close();
            assertEquals(expected.size(), peer.counter("recv_delivered"), "still counted once after the close");
            assertEquals(bytes, peer.counter("recv_bytes_freed_fromsock"), "still counted once after the close");
        }
    }

    @Test
    void aReadOfManySmallMessagesForOneSocketQueuesThemInFewerArrivalsThanMessages() throws Exception {
        try (Peer peer = new Peer()) {
            Random random = new Random(1);
            List<Sent> expected = new ArrayList<>();
            ByteBuffer stream = ByteBuffer.allocate(200 * (RdsHeader.SIZE + 64));
            for (int i = 0; i < 200; i++) {
                byte[] p = new byte[64];
                random.nextBytes(p);
                expected.add(new Sent(PEER_PORTS[0], p));
                stream.put(peer.frame(PEER_PORTS[0], 0, p));
            }
            stream.flip();
            // Reads of growing size: the room a small message's arrival is claimed with grows with the runs.
            while (stream.hasRemaining()) {
                int n = Math.min(stream.remaining(), 16 * (RdsHeader.SIZE + 64));
                peer.conn.feed(stream.duplicate().limit(stream.position() + n));
                stream.position(stream.position() + n);
            }
            long[] census = peer.queue().census();
            assertEquals(200, census[0], "two hundred messages queued");
            assertTrue(peer.queuedArrivals() < 200 / 2,
                    "the messages share arrivals: " + peer.queuedArrivals() + " arrivals for 200 messages");
            for (int i = 0; i < expected.size(); i++) {
                peer.takeAndCheck(random, expected.get(i), i, 1);
            }
        }
    }

    /**
     * A peek copies its message while another reader may take the same message and give its arrival back for the I/O
     * thread to refill: the peek must still see one whole message. Messages above {@link Arrival#RUN_ENTRY_MAX} (an
     * arrival each), a reader taking them, a second one peeking all the time, and this thread feeding one message per
     * read a few ahead of the taker, so that arrivals are reused at once. A race: it may take many messages to show a
     * broken peek, and none can make a correct one fail.
     */
    @Test
    void aPeekSeesOneWholeMessageWhileAnotherReaderTakesIt() throws Exception {
        int size = 2 * Arrival.RUN_ENTRY_MAX;
        int count = 20_000;
        try (Peer peer = new Peer()) {
            Semaphore window = new Semaphore(4);
            AtomicReference<String> broken = new AtomicReference<>();
            AtomicBoolean done = new AtomicBoolean();
            AtomicLong peeks = new AtomicLong();
            Thread peeker = new Thread(() -> {
                ByteBuffer dst = ByteBuffer.allocate(size);
                RdsMessageInfo info = new RdsMessageInfo();
                while (!done.get() && broken.get() == null) {
                    dst.clear();
                    try {
                        int n = peer.socket.receive(dst, info, RdsSocket.MSG_PEEK | RdsSocket.MSG_DONTWAIT);
                        peeks.incrementAndGet();
                        String why = wholeMessage(dst, n, info.length(), size);
                        if (why != null) {
                            broken.compareAndSet(null, "peek " + peeks.get() + ": " + why);
                        }
                    } catch (EagainException empty) {
                        Thread.onSpinWait();
                    } catch (Exception e) {
                        broken.compareAndSet(null, "peek: " + e);
                    }
                }
            }, "peeker");
            Thread taker = new Thread(() -> {
                ByteBuffer dst = ByteBuffer.allocate(size);
                RdsMessageInfo info = new RdsMessageInfo();
                try {
                    for (long i = 0; i < count && broken.get() == null; i++) {
                        dst.clear();
                        int n = peer.socket.receive(dst, info, 0);
                        String why = wholeMessage(dst, n, info.length(), size);
                        if (why == null && dst.getLong(0) != i) {
                            why = "message " + dst.getLong(0) + " where " + i + " was next";
                        }
                        if (why != null) {
                            broken.compareAndSet(null, "take: " + why);
                        }
                        window.release();
                    }
                } catch (Exception e) {
                    broken.compareAndSet(null, "take: " + e);
                }
            }, "taker");
            peeker.start();
            taker.start();
            byte[] p = new byte[size];
            ByteBuffer pb = ByteBuffer.wrap(p);
            long fed = 0;
            for (; fed < count && broken.get() == null; fed++) {
                if (!window.tryAcquire(WAIT.toSeconds(), TimeUnit.SECONDS)) {
                    break;                                  // the taker stopped: its reason is in broken
                }
                long i = fed;
                for (int w = 0; w < size; w += 8) {
                    pb.putLong(w, i);
                }
                peer.conn.feed(peer.frame(PEER_PORTS[0], 0, p));
            }
            taker.join(WAIT.toMillis());
            done.set(true);
            peeker.join(WAIT.toMillis());
            assertEquals(null, broken.get(), "after " + peeks.get() + " peeks");
            assertEquals(count, fed, "every message was fed, the taker keeping up");
            assertFalse(taker.isAlive() || peeker.isAlive(), "both readers finished");
        }
    }

    /** Null if {@code dst} holds one whole message of this test: {@code size} bytes, one number throughout. */
    private static String wholeMessage(ByteBuffer dst, int n, int length, int size) {
        if (n != size || length != size) {
            return n + " bytes copied of a message of " + length + ", all are " + size;
        }
        long first = dst.getLong(0);
        for (int w = 8; w < size; w += 8) {
            if (dst.getLong(w) != first) {
                return "message " + first + " has " + dst.getLong(w) + " at byte " + w + ": two messages mixed";
            }
        }
        return null;
    }

    /** One stack with one bound socket and the fuzzing transport's connection from the peer. */
    private static final class Peer implements AutoCloseable {
        final CoreStack stack;
        final FuzzTransport.Conn conn;
        final RdsSocket socket;
        long nextSequence = 1;

        Peer() throws Exception {
            stack = new CoreStack(RdsStackConfig.builder().name("runs").address(LOCAL)
                    .reconnectDelays(Duration.ofHours(1), Duration.ofHours(1)).paths(1).build());
            FuzzTransport transport = FuzzTransport.install(stack);
            socket = stack.openSocket();
            socket.setOption(RdsSocketOptions.SO_RDS_TRANSPORT, FuzzTransport.NAME);
            socket.setOption(RdsSocketOptions.SO_RCVBUF, 8 << 20);
            socket.bind(new InetSocketAddress(LOCAL, PORT));
            conn = transport.accept(new InetSocketAddress(LOCAL, 16385), new InetSocketAddress(PEER, 50000));
            assertTrue(conn != null, "the stack accepts the peer's connection");
        }

        /**
         * {@code count} frames back to back: sizes from empty to past {@link Arrival#RUN_ENTRY_MAX}, from three
         * ports, with now and then a duplicate (an earlier sequence number, resent), which must not arrive.
         */
        ByteBuffer stream(Random random, int count, List<Sent> expected) {
            List<ByteBuffer> frames = new ArrayList<>();
            List<Sent> all = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                if (nextSequence > 1 && random.nextInt(20) == 0) {
                    int back = 1 + random.nextInt((int) Math.min(nextSequence - 1, 5));
                    long old = nextSequence - back;
                    byte[] p = all.get((int) old - 1).payload();
                    ByteBuffer dup = frameAt(old, all.get((int) old - 1).sourcePort(), RdsHeader.FLAG_RETRANSMITTED, p);
                    frames.add(dup);
                    expected.add(null);                 // a frame that delivers nothing
                    continue;
                }
                int size = switch (random.nextInt(6)) {
                    case 0 -> 0;
                    case 1 -> Arrival.RUN_ENTRY_MAX - 1 + random.nextInt(3);
                    case 2 -> random.nextInt(3000);
                    default -> random.nextInt(200);
                };
                byte[] p = new byte[size];
                random.nextBytes(p);
                int sport = PEER_PORTS[random.nextInt(random.nextInt(4) == 0 ? PEER_PORTS.length : 1)];
                Sent s = new Sent(sport, p);
                all.add(s);
                expected.add(s);
                frames.add(frame(sport, 0, p));
            }
            expected.removeIf(s -> s == null);
            int total = frames.stream().mapToInt(ByteBuffer::remaining).sum();
            ByteBuffer stream = ByteBuffer.allocate(total);
            frames.forEach(stream::put);
            frameEnds = new ArrayList<>();
            int end = 0;
            for (ByteBuffer f : frames) {
                end += f.limit();
                frameEnds.add(end);
            }
            delivering = new ArrayList<>();
            int e = 0;
            for (int i = 0; i < frames.size(); i++) {
                RdsHeader h = new RdsHeader().decode(frames.get(i).duplicate().rewind());
                delivering.add((h.flags() & RdsHeader.FLAG_RETRANSMITTED) == 0 ? e++ : -1);
            }
            return stream.flip();
        }

        private List<Integer> frameEnds;
        private List<Integer> delivering;

        /** How many messages are whole once {@code cut} more bytes of the stream are fed. */
        int decodedWhole(ByteBuffer stream, int cut, List<Sent> expected, int sofar) {
            int upTo = stream.position() + cut;
            int whole = sofar;
            for (int i = 0; i < frameEnds.size() && frameEnds.get(i) <= upTo; i++) {
                if (delivering.get(i) >= 0) {
                    whole = Math.max(whole, delivering.get(i) + 1);
                }
            }
            return whole;
        }

        ByteBuffer frame(int sourcePort, int flags, byte[] payload) {
            return frameAt(nextSequence++, sourcePort, flags, payload);
        }

        ByteBuffer frameAt(long sequence, int sourcePort, int flags, byte[] payload) {
            RdsHeader h = new RdsHeader().sequence(sequence).flags(flags).sourcePort(sourcePort)
                    .destinationPort(PORT).length(payload.length);
            ByteBuffer b = ByteBuffer.allocate(RdsHeader.SIZE + payload.length);
            h.encode(b);
            return b.put(payload).flip();
        }

        /** Takes the next message in one of the ways a reader can, and checks it is {@code s}. */
        void takeAndCheck(Random random, Sent s, int index, long seed) throws Exception {
            String what = "message " + index + " of " + s.payload().length + " bytes (seed " + seed + ")";
            InetSocketAddress source = new InetSocketAddress(PEER, s.sourcePort());
            switch (random.nextInt(4)) {
                case 0 -> {                                  // the allocating receive
                    RdsDatagram d = socket.receive(WAIT).orElseThrow();
                    assertEquals(source, d.source(), what);
                    byte[] got = new byte[d.length()];
                    d.payload().get(got);
                    assertArrayEquals(s.payload(), got, what);
                }
                case 1 -> {                                  // a peek first: the same message, still queued
                    RdsMessageInfo info = new RdsMessageInfo();
                    ByteBuffer dst = ByteBuffer.allocate(s.payload().length + 8);
                    assertEquals(s.payload().length, socket.receive(dst, info, RdsSocket.MSG_PEEK), what);
                    assertEquals(source, info.source(), what);
                    assertArrayEquals(s.payload(), Arrays.copyOf(dst.array(), s.payload().length), what);
                    RdsDatagram d = socket.receive(WAIT).orElseThrow();
                    byte[] got = new byte[d.length()];
                    d.payload().get(got);
                    assertArrayEquals(s.payload(), got, "taken after the peek: " + what);
                }
                default -> {                                 // into the caller's buffer, which may be too small
                    int room = random.nextBoolean() ? s.payload().length + random.nextInt(10)
                            : random.nextInt(s.payload().length + 1);
                    ByteBuffer dst = ByteBuffer.allocate(room + 5).position(5);
                    RdsMessageInfo info = new RdsMessageInfo();
                    int n = socket.receive(dst, info, 0);
                    int expect = Math.min(room, s.payload().length);
                    assertEquals(expect, n, what);
                    assertEquals(5 + expect, dst.position(), what);
                    assertEquals(s.payload().length, info.length(), what);
                    assertEquals(expect < s.payload().length, info.truncated(), what);
                    assertEquals(source, info.source(), what);
                    assertEquals(PORT, info.destinationPort(), what);
                    assertArrayEquals(Arrays.copyOf(s.payload(), expect), Arrays.copyOfRange(dst.array(), 5, 5 + expect),
                            what);
                }
            }
        }

        ReceiveQueue queue() throws ReflectiveOperationException {
            var f = CoreSocket.class.getDeclaredField("receiveQueue");
            f.setAccessible(true);
            return (ReceiveQueue) f.get(socket);
        }

        /** Arrivals linked in the socket's receive queue (a run counts once). */
        int queuedArrivals() throws ReflectiveOperationException {
            ReceiveQueue q = queue();
            var head = ReceiveQueue.class.getDeclaredField("head");
            head.setAccessible(true);
            int n = 0;
            for (Arrival a = (Arrival) head.get(q); a != null; a = a.next()) {
                n++;
            }
            assertFalse(n == 0, "something is queued");
            return n;
        }

        long counter(String name) {
            Long v = stack.counters().get(name);
            assertTrue(v != null, "no counter " + name);
            return v;
        }

        @Override
        public void close() {
            stack.close();
        }
    }

    private static InetAddress address(int a, int b, int c, int d) {
        try {
            return InetAddress.getByAddress(new byte[] {(byte) a, (byte) b, (byte) c, (byte) d});
        } catch (UnknownHostException e) {
            throw new AssertionError(e);
        }
    }
}
