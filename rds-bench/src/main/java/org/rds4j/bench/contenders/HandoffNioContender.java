package org.rds4j.bench.contenders;

import java.io.IOException;
import java.nio.channels.SocketChannel;
import java.util.concurrent.TimeUnit;
import org.rds4j.bench.Contender;
import org.rds4j.bench.Contenders;
import org.rds4j.bench.Endpoint;
import org.rds4j.bench.Link;

/**
 * Raw NIO with rds4j's threading and nothing of its protocol: what the threading model itself costs on this machine.
 * One TCP connection on 127.0.0.1 as in {@link NioContender}, but each side's channel belongs to an I/O thread of its
 * own ({@link HandoffIoThread}), and the application threads hand messages to it and take them from it through
 * lock-free rings ({@link HandoffRing}): two hand-offs and four threads per one-way message, as in rds4j, where raw
 * NIO has none and two. The payload is copied by the sender into the ring, by the I/O thread into its packed write,
 * by the I/O thread out of its read buffer into the ring, and by the reader out of the ring: rds4j's copies too.
 *
 * <p>No sequence numbers, acknowledgements, send budget, congestion or headers beyond a 4-byte length, and no
 * batching of small sends into runs. With {@code spin} the waits poll (the I/O threads never sleep, the application
 * threads yield between checks instead of parking), as rds4j's busy-poll mode did before its application threads
 * read and wrote the sockets themselves. For a small message's round trip that is a floor for hand-offs: they, not
 * the protocol, set it, and no rds4j that hands its messages to I/O threads gets under it on the same machine.
 * For one-way throughput it is not one: rds4j's runs and pools can beat it
 * (docs/decisions/0019-nio-handoff-is-the-floor.md; busy-poll replies over TCP: decision 0031).
 */
public final class HandoffNioContender implements Contender {
    private static final long JOIN_MILLIS = TimeUnit.SECONDS.toMillis(5);
    private final boolean spin;

    public HandoffNioContender(boolean spin) {
        this.spin = spin;
    }

    @Override
    public String name() {
        return spin ? Contenders.HANDOFF_SPIN : "nio-handoff";
    }

    @Override
    public String description() {
        return "raw NIO with rds4j's threading and no protocol: on each side an I/O thread owns a non-blocking "
                + "SocketChannel on 127.0.0.1 (4-byte length prefix, writes packed up to 64 KiB, 256 KiB reads), "
                + "application threads hand messages to it and take them from it through lock-free rings; "
                + (spin ? "nothing sleeps: I/O threads and waiting application threads yield between checks"
                        : "an idle I/O thread yields for " + HandoffIoThread.YIELD_MICROS + " us, then sleeps in "
                                + "select; waiting application threads park, a receive after a send first yielding for "
                                + "up to 200 us while replies come that fast (rds4j's default)");
    }

    @Override
    public Link open(int maxMessageSize) throws IOException {
        int slotSize = Math.max(maxMessageSize, Long.BYTES);
        int slots = HandoffRing.slotsFor(slotSize);
        HandoffLinkState state = new HandoffLinkState();
        HandoffLink link = LoopbackSocketPair.open((a, b) -> new HandoffLink(state,
                side(a, "a", slots, slotSize, state), side(b, "b", slots, slotSize, state)));
        link.start();
        return link;
    }

    private Side side(SocketChannel channel, String name, int slots, int slotSize, HandoffLinkState state)
            throws IOException {
        HandoffRing outgoing = new HandoffRing(slots, slotSize, spin);
        HandoffRing incoming = new HandoffRing(slots, slotSize, spin);
        HandoffEndpoint endpoint = new HandoffEndpoint(outgoing, incoming, state);
        HandoffIoThread io = new HandoffIoThread(HandoffLink.PREFIX + name, channel, outgoing, incoming, state,
                spin);
        endpoint.io(io);
        return new Side(channel, endpoint, io);
    }

    private record Side(SocketChannel channel, HandoffEndpoint endpoint, HandoffIoThread io) {
    }

    private static final class HandoffLink implements Link {
        /** The I/O threads' names: this, then "a" or "b". */
        static final String PREFIX = "nio-handoff-io-";
        private final HandoffLinkState state;
        private final Side a;
        private final Side b;

        HandoffLink(HandoffLinkState state, Side a, Side b) {
            this.state = state;
            this.a = a;
            this.b = b;
        }

        void start() {
            a.io().start();
            b.io().start();
        }

        @Override
        public Endpoint a() {
            return a.endpoint();
        }

        @Override
        public Endpoint b() {
            return b.endpoint();
        }

        @Override
        public String threadPrefix(boolean sideA) {
            return PREFIX + (sideA ? "a" : "b");
        }

        @Override
        public void close() {
            state.close();
            for (Side s : new Side[] {a, b}) {
                s.io().wakeIfSleeping();
                try {
                    s.channel().close();
                } catch (IOException ignored) {
                    // closing is all that is left to do
                }
            }
            for (Side s : new Side[] {a, b}) {
                try {
                    s.io().join(JOIN_MILLIS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }
    }
}
