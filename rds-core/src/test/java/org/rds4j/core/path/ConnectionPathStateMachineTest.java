package org.rds4j.core.path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.function.BiConsumer;
import java.util.function.Predicate;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.state.Action;
import net.jqwik.api.state.ActionChain;
import net.jqwik.api.state.Transformer;
import org.rds4j.core.wire.RdsHeader;

/**
 * The connection-path state machine against a model of rds4j's documented behaviour (docs/protocol.md,
 * "Connections"; net/rds/threads.c): random sequences of queued messages, connect successes and failures (of the
 * outstanding attempt or of a stale one), closes (of the current connection or a stale one), incoming connections,
 * timer ticks, transmits, protocol errors, for the host with the smaller address and for the one with the larger.
 * {@link PathHarness} drives the real {@link ConnectionPath} through fakes and checks it against the model after
 * every step. Everything runs on the test thread in virtual time, with a seeded random source for the backoff.
 */
class ConnectionPathStateMachineTest {

    // ------------------------------------------------------------------------------------------------ properties

    /** The smaller host: connects on demand, reconnects by itself with backoff, calls back a poking peer. */
    @Property(tries = 1000)
    void smallerHostFollowsTheModel(@ForAll("smallerHost") ActionChain<PathHarness> chain) {
        chain.run();
    }

    /** The larger host: pokes while it has messages queued, takes the peer's connection, refuses a second. */
    @Property(tries = 1000)
    void largerHostFollowsTheModel(@ForAll("largerHost") ActionChain<PathHarness> chain) {
        chain.run();
    }

    @Provide
    Arbitrary<ActionChain<PathHarness>> smallerHost() {
        return chains(true);
    }

    @Provide
    Arbitrary<ActionChain<PathHarness>> largerHost() {
        return chains(false);
    }

    private static Arbitrary<ActionChain<PathHarness>> chains(boolean smaller) {
        Arbitrary<Integer> sel = Arbitraries.integers().between(0, 3);
        return ActionChain.<PathHarness>startWith(() -> new PathHarness(smaller, 42))
                .withAction(3, action("enqueue", h -> true, Arbitraries.integers().between(0, 40),
                        PathHarness::enqueue))
                .withAction(3, action("connect succeeds", h -> !h.transport.pendingAttempts().isEmpty(), sel,
                        (h, i) -> h.connectSucceeds(pick(h.transport.pendingAttempts(), i))))
                .withAction(2, action("connect fails", h -> !h.transport.pendingAttempts().isEmpty(), sel,
                        (h, i) -> h.connectFails(pick(h.transport.pendingAttempts(), i))))
                .withAction(2, action("connection closes", h -> !h.transport.open().isEmpty(),
                        Combinators.combine(sel, Arbitraries.of(false, true)).as(List::of),
                        (h, a) -> h.closes(pick(h.transport.open(), (Integer) a.get(0)), (Boolean) a.get(1))))
                .withAction(2, action("incoming connection", h -> true, Arbitraries.just(0), (h, x) -> h.incoming()))
                .withAction(3, action("timer fires", h -> !h.env.scheduler.pending().isEmpty(), Arbitraries.just(0),
                        (h, x) -> h.timerFires()))
                .withAction(3, action("transmit", h -> !h.transport.open().isEmpty(),
                        Combinators.combine(sel, Arbitraries.integers().between(0, 4)).as(List::of),
                        (h, a) -> h.transmit(pick(h.transport.open(), a.get(0)), a.get(1))))
                .withAction(2, action("transmitted", h -> !h.transport.open().isEmpty(),
                        Combinators.combine(sel, Arbitraries.integers().between(0, 8)).as(List::of),
                        (h, a) -> {
                            FakeTransport.FakeConnection c = pick(h.transport.open(), a.get(0));
                            long offset = c.frameEnds.isEmpty() ? 0 : pick(c.frameEnds, a.get(1));
                            h.transmitted(c, Math.max(c.reported, offset));
                        }))
                .withAction(2, action("pong", h -> !answerable(h).isEmpty(), sel,
                        (h, i) -> h.pong(h.liveCurrent(), pick(answerable(h), i))))
                .withAction(1, action("ack-only", h -> h.liveCurrent() != null && !h.mSent.isEmpty(), sel,
                        (h, i) -> h.ack(h.liveCurrent(), pick(List.copyOf(h.mSent), i))))
                .withAction(1, action("protocol error", h -> !uncorrupted(h).isEmpty(), sel,
                        (h, i) -> h.protocolError(pick(uncorrupted(h), i))))
                .withAction(1, action("congestion update", h -> true, Arbitraries.just(0),
                        (h, x) -> h.congestionUpdate()))
                .withMaxTransformations(80);
    }

    /** Ports of outstanding acknowledgement pings written on the current connection, which the peer can answer. */
    private static List<Integer> answerable(PathHarness h) {
        List<Integer> ports = new java.util.ArrayList<>();
        if (h.liveCurrent() != null) {
            for (int i = 0; i < h.mAckPing.length; i++) {
                if (h.mAckPing[i] != 0 && h.mSent.contains(h.mAckPing[i])) {
                    ports.add(h.mPorts[i]);
                }
            }
        }
        return ports;
    }

    private static List<FakeTransport.FakeConnection> uncorrupted(PathHarness h) {
        return h.transport.open().stream().filter(c -> !h.corrupted.contains(c)).toList();
    }

    private static <T> T pick(List<T> l, int i) {
        return l.get(i % l.size());
    }

    private static <T> Action.Independent<PathHarness> action(String name, Predicate<PathHarness> precondition,
                                                             Arbitrary<T> argument, BiConsumer<PathHarness, T> op) {
        return new Action.Independent<>() {
            @Override
            public boolean precondition(PathHarness h) {
                return precondition.test(h);
            }

            @Override
            public Arbitrary<Transformer<PathHarness>> transformer() {
                return argument.map(arg -> Transformer.mutate(name + " " + arg, h -> op.accept(h, arg)));
            }
        };
    }

    // ------------------------------------------------------------------------------------------------ examples

    /** Who connects: the larger host pokes (connects, closes at once), the smaller peer connects back, traffic flows. */
    @Example
    void largerHostPokesThenPeerConnectsBack() {
        PathHarness h = new PathHarness(false, 1);
        h.enqueue(10);
        assertEquals(PathState.CONNECTING, h.path.state());
        assertEquals(1, h.transport.attempts.size());

        FakeTransport.FakeConnection poke = h.connectSucceeds(h.attempt(0));
        assertEquals(1, poke.closeCalls, "the poke is closed as soon as it connects");
        assertEquals(PathState.DOWN, h.path.state());
        assertEquals(1, h.env.scheduler.pending().size(), "a re-poke is scheduled while a message is queued");
        h.closes(poke, false);                          // the close of the poke completes: nothing changes

        FakeTransport.FakeConnection back = h.incoming();
        assertNotNull(back, "the peer's connection is taken");
        assertEquals(PathState.UP, h.path.state());
        List<PathHarness.RecordingSink.Frame> frames = h.transmit(back, 10);
        assertEquals(3, frames.size(), "congestion map, the message, the multipath probe: " + frames);
        assertEquals(RdsHeader.FLAG_CONG_BITMAP, frames.get(0).flags());
        assertEquals(1, frames.get(1).sequence());
        assertEquals(2, frames.get(2).sequence());
        assertEquals(ConnectionPath.PROBE_PORT, frames.get(2).sport());

        h.timerFires();                                 // the re-poke falls due while UP: nothing happens
        assertEquals(PathState.UP, h.path.state());
        assertEquals(1, h.transport.attempts.size());
    }

    /** Duelling connections: our poke is in flight when the smaller peer's connection arrives. Theirs wins. */
    @Example
    void duellingPokeInFlightWhenPeerConnects() {
        PathHarness h = new PathHarness(false, 2);
        h.enqueue(10);
        FakeTransport.FakeConnection theirs = h.incoming();
        assertNotNull(theirs, "taken while CONNECTING: our poke is stale now");
        assertEquals(PathState.UP, h.path.state());

        FakeTransport.FakeConnection ours = h.connectSucceeds(h.attempt(0));
        assertEquals(1, ours.closeCalls, "the stale poke is closed when it connects");
        assertEquals(0, ours.transmitRequests);
        assertEquals(PathState.UP, h.path.state());
        assertTrue(theirs.live());
        h.closes(ours, true);                           // its close is stale too
        assertEquals(PathState.UP, h.path.state());
        assertEquals(0, h.path.resets());
        assertEquals(3, h.transmit(theirs, 10).size());

        assertNull(h.incoming(), "a second connection is refused while UP");
    }

    /** As above, but the stale poke fails instead: ignored. */
    @Example
    void duellingPokeFailsAfterPeerConnected() {
        PathHarness h = new PathHarness(false, 3);
        h.enqueue(10);
        FakeTransport.FakeConnection theirs = h.incoming();
        h.connectFails(h.attempt(0));
        assertEquals(PathState.UP, h.path.state());
        assertTrue(theirs.live());
        assertTrue(h.env.scheduler.pending().stream().allMatch(t -> t.periodNanos > 0), "no re-poke for a stale failure");
    }

    /** Reconnect backoff: immediate first retry, then random delays below min, 2·min, …; UP resets, so the next is immediate. */
    @Example
    void connectFailureBacksOffAndAProvenConnectionResetsTheBackoff() {
        PathHarness h = new PathHarness(true, 4);
        h.enqueue(10);
        h.connectFails(h.attempt(0));
        assertEquals(PathState.DOWN, h.path.state());
        assertEquals(0, lastTask(h).delayNanos, "the first reconnect is immediate");
        h.timerFires();
        h.connectFails(h.attempt(1));
        assertEquals(FakeEnvironment.MIN_NANOS, lastDraw(h).bound());
        assertEquals(lastDraw(h).value(), lastTask(h).delayNanos);
        h.timerFires();
        h.connectFails(h.attempt(2));
        assertEquals(2 * FakeEnvironment.MIN_NANOS, lastDraw(h).bound(), "the ceiling doubles");
        h.timerFires();
        FakeTransport.FakeConnection c = h.connectSucceeds(h.attempt(3));
        assertEquals(PathState.UP, h.path.state());
        assertEquals(1, c.transmitRequests);

        h.ack(c, 0);                                    // the peer sent on it: the connection proved itself
        int draws = h.env.draws.size();
        h.closes(c, true);
        assertEquals(PathState.DOWN, h.path.state());
        assertEquals(1, h.path.resets());
        assertEquals(0, lastTask(h).delayNanos, "a proven connection resets the backoff: the reconnect is immediate");
        assertEquals(draws, h.env.draws.size());
        h.timerFires();
        assertEquals(5, h.transport.attempts.size());
    }

    /**
     * A peer that accepts and at once resets, again and again (a kernel that remembers more paths than this host
     * uses): the first {@link ReconnectTimer#QUICK_RETRIES} connections in a row restart the backoff, as the kernel
     * does (a 6.12 kernel needs quick retries to get a path back), then the delay grows instead of a storm.
     */
    @Example
    void connectionsClosedBeforeThePeerSentAnythingStopRestartingTheBackoffAfterAWhile() {
        PathHarness h = new PathHarness(true, 4);
        h.enqueue(10);
        for (int i = 0; i < ReconnectTimer.QUICK_RETRIES; i++) {
            FakeTransport.FakeConnection c = h.connectSucceeds(h.attempt(i));
            h.closes(c, true);                          // refused: nothing read, closed at once
            assertEquals(0, lastTask(h).delayNanos, "quick retry " + i);
            h.timerFires();
        }
        int n = ReconnectTimer.QUICK_RETRIES;
        FakeTransport.FakeConnection c = h.connectSucceeds(h.attempt(n));
        h.closes(c, true);
        assertEquals(FakeEnvironment.MIN_NANOS, lastDraw(h).bound(), "no longer at once: the backoff grows");
        h.timerFires();
        c = h.connectSucceeds(h.attempt(n + 1));
        h.closes(c, true);
        assertEquals(2 * FakeEnvironment.MIN_NANOS, lastDraw(h).bound(), "and keeps growing");
        h.timerFires();
        c = h.connectSucceeds(h.attempt(n + 2));
        h.ack(c, 0);                                    // a connection the peer sends on: quick retries again
        h.closes(c, true);
        assertEquals(0, lastTask(h).delayNanos);
    }

    /** protocol.md "Sequence numbers, resending, duplicates": on loss, written-but-unreleased messages go back in front, marked retransmitted, numbers kept. */
    @Example
    void lossRequeuesUnreleasedMessagesInOrder() {
        PathHarness h = new PathHarness(true, 5);
        h.enqueue(1);
        h.enqueue(2);
        h.enqueue(3);
        FakeTransport.FakeConnection c = h.connectSucceeds(h.attempt(0));
        List<PathHarness.RecordingSink.Frame> frames = h.transmit(c, 10);
        assertEquals(5, frames.size(), "map, 1, 2, 3, probe 4: " + frames);
        h.ack(c, 1);                                    // the peer (rds4j) acknowledges message 1
        assertEquals(List.of(1L), h.owner.released);

        h.closes(c, true);
        assertEquals(1, h.path.resets());
        assertEquals(5, h.path.nextTxSeq(), "sequence counters survive the reset");
        assertEquals(3, h.path.queuedMessages());
        h.enqueue(4);                                   // number 5, behind the ones to resend
        h.timerFires();
        FakeTransport.FakeConnection c2 = h.connectSucceeds(h.attempt(1));
        List<PathHarness.RecordingSink.Frame> again = h.transmit(c2, 10);
        // map, 2 3 probe-4 again, message 5, and the probe path 0 sends each time it comes up (6)
        assertEquals(List.of(0L, 2L, 3L, 4L, 5L, 6L),
                again.stream().map(PathHarness.RecordingSink.Frame::sequence).toList());
        assertEquals(List.of(RdsHeader.FLAG_CONG_BITMAP, RdsHeader.FLAG_RETRANSMITTED, RdsHeader.FLAG_RETRANSMITTED,
                RdsHeader.FLAG_RETRANSMITTED, 0, 0),
                again.stream().map(PathHarness.RecordingSink.Frame::flags).toList());
    }

    /** The smaller host, poked by the larger peer (the stack refused its connection), connects if down. */
    @Example
    void smallerHostConnectsBackWhenPoked() {
        PathHarness h = new PathHarness(true, 6);
        h.incoming();
        assertEquals(PathState.CONNECTING, h.path.state());
        h.incoming();                                   // a second poke while connecting: nothing new
        assertEquals(1, h.transport.attempts.size());
        h.connectSucceeds(h.attempt(0));
        h.incoming();
        assertEquals(1, h.transport.attempts.size());
        assertEquals(PathState.UP, h.path.state());
    }

    /** A protocol error drops the connection: DISCONNECTING, a second connection is refused until it closes. */
    @Example
    void protocolErrorDisconnectsThenReconnects() {
        PathHarness h = new PathHarness(false, 7);
        FakeTransport.FakeConnection c = h.incoming();
        h.protocolError(c);
        assertEquals(PathState.DISCONNECTING, h.path.state());
        assertEquals(1, c.abortCalls);
        assertNull(h.incoming(), "refused while DISCONNECTING");
        h.closes(c, true);
        assertEquals(PathState.DOWN, h.path.state());
        assertEquals(1, h.path.resets());
        assertEquals(1, h.env.scheduler.pending().size(), "the probe is still queued: re-poke");
        assertNotNull(h.incoming());
    }

    /**
     * Closing a socket drops its messages from the path, queued or sent, as the kernel does; on the larger
     * host that ends the reason to poke, so the pending re-poke does not connect when its timer fires.
     */
    @Example
    void aClosedSocketsMessagesGoAndThePokesStop() {
        PathHarness h = new PathHarness(false, 11);
        h.enqueue(10);                                  // the larger host has something to send: it pokes
        assertEquals(1, h.transport.attempts.size());
        h.transport.attempts.get(0).handler.onConnected(h.transport.newConnection(true, h.local, h.peer));
        assertEquals(PathState.DOWN, h.path.state(), "a poke closes at once");
        assertEquals(1, h.env.scheduler.pending().size(), "a re-poke waits");
        h.owner.closing = true;
        assertEquals(1, h.path.purge(h.owner), "the closing socket's message goes");
        assertEquals(List.of(1L), h.owner.cancelled);
        assertEquals(0, h.path.queuedMessages());
        h.env.scheduler.runOne();                       // the re-poke's time comes
        assertEquals(1, h.transport.attempts.size(), "no poke without messages");
        assertEquals(PathState.DOWN, h.path.state());
    }

    // ------------------------------------------------------------------------------------------------ bugs found

    /**
     * BUG (fails until fixed): a re-poke still pending when the peer connected survives UP. The larger host's poke
     * failed a few times, so a re-poke waits for a random delay below up to 1 s; then the peer connects (UP, which
     * resets the backoff). When that connection drops with a message queued, the re-poke should be immediate (the
     * first reconnect after UP), but {@code scheduleReconnect} sees {@code reconnectPending} still set and
     * schedules nothing: the host waits for the old timer. Likewise a message queued on the DOWN path does not
     * connect until then, and if the queue is empty the old timer pokes anyway. Fix: cancel the pending reconnect
     * when the path comes up (keep its {@code ScheduledFuture}, cancel it in {@code cameUp} and clear
     * {@code reconnectPending}, and let {@code reconnect()} ignore a run whose future is no longer the current one).
     */
    @Example
    void aRePokePendingFromBeforeUpIsCancelledAndTheNextLossRePokesAtOnce() {
        PathHarness h = new PathHarness(false, 10);
        h.enqueue(10);
        for (int i = 0; i < 11; i++) {
            h.connectFails(h.attempt(i));
            h.timerFires();
        }
        h.connectFails(h.attempt(11));
        VirtualScheduler.Task old = reconnectTask(h);
        assertTrue(old.dueNanos > h.env.scheduler.now(), "a delayed re-poke is pending: " + old);
        FakeTransport.FakeConnection c = h.incoming();
        assertEquals(PathState.UP, h.path.state());

        h.ack(c, 0);                                    // the peer sent on it: proven, the backoff resets
        c.closedDelivered = true;                        // the peer's connection drops; a message is still queued
        c.handler.onClosed(new java.io.IOException("connection reset (test)"));
        assertEquals(PathState.DOWN, h.path.state());
        VirtualScheduler.Task next = reconnectTask(h);
        assertEquals(h.env.scheduler.now(), next.dueNanos, "the connection proved itself, so the re-poke after the"
                + " loss is immediate; it waits for the re-poke scheduled before UP: " + next);
    }

    /**
     * BUG (fails until fixed): an acknowledgement ping whose pong was lost with the connection stays outstanding
     * forever. Towards a kernel peer (which never sends h_ack): messages 1, probe 2 and ping 3 reach the kernel,
     * its pong is lost when the connection drops. On the new connection 1, 2, 3 are resent marked retransmitted and
     * the kernel drops all three as duplicates (docs/protocol.md, "Sequence numbers, resending, duplicates"; net/rds/recv.c: the duplicate check comes before the ping is
     * answered), so nothing will ever answer ping 3. Yet {@link AckRequests#request} counts ping 3 as covering every
     * sent message and sends no new one (the 200 ms fallback uses the same rule), so message 1 is never released
     * until the socket sends something new; and each such loss leaks one of the four ping slots for good, after
     * which no ping is ever sent and nothing to a kernel peer is released again. Fix: in {@code closed()}, forget
     * outstanding pings ({@code Arrays.fill(ackPingSeq, 0)}); a pong can only answer a ping on the connection it
     * came on. (Optionally, do not retain ping messages across a reset at all: resending them is pointless.)
     */
    @Example
    void anAckPingWhosePongWasLostIsReplacedAndItsPortQuarantined() {
        PathHarness h = new PathHarness(true, 11);
        h.enqueue(10);
        FakeTransport.FakeConnection c = h.connectSucceeds(h.attempt(0));
        h.transmit(c, 10);                              // map, message 1, probe 2
        h.transmitted(c, c.streamOffset);               // all left: ping 3 from an acknowledgement port
        h.transmit(c, 10);
        assertEquals(1, h.env.counters.get(org.rds4j.core.stack.RdsCounters.Counter.ACK_PING_SENT));
        long kernelNextRx = 4;                          // the kernel got 1, 2, 3; its pong is lost with the connection
        h.closes(c, true);

        h.timerFires();
        FakeTransport.FakeConnection c2 = h.connectSucceeds(h.attempt(1));
        List<PathHarness.RecordingSink.Frame> frames = new java.util.ArrayList<>(h.transmit(c2, 10));
        h.transmitted(c2, c2.streamOffset);
        frames.addAll(h.transmit(c2, 10));
        for (int round = 0; round < 3; round++) {       // the kernel answers what it answers; time passes
            for (PathHarness.RecordingSink.Frame f : frames) {
                if (f.flags() == RdsHeader.FLAG_CONG_BITMAP) {
                    continue;
                }
                if ((f.flags() & RdsHeader.FLAG_RETRANSMITTED) != 0 && f.sequence() < kernelNextRx) {
                    continue;                           // recv_drop_old_seq, no pong
                }
                kernelNextRx = f.sequence() + 1;
                if (f.dport() == 0 && f.sport() != 0) {
                    h.pong(c2, f.sport());
                }
            }
            h.transmitted(c2, c2.streamOffset);
            frames = new java.util.ArrayList<>(h.transmit(c2, 10));
        }
        assertEquals(List.of(1L), h.owner.released, "the kernel peer has message 1, but nothing asks it in a way"
                + " it answers: ping 3, retransmitted, is dropped as a duplicate, and still counts as outstanding");
    }

    private static VirtualScheduler.Task reconnectTask(PathHarness h) {
        List<VirtualScheduler.Task> l = h.env.scheduler.pending().stream().filter(t -> t.periodNanos == 0).toList();
        assertEquals(1, l.size(), "one reconnect pending: " + l);
        return l.get(0);
    }

    private static VirtualScheduler.Task lastTask(PathHarness h) {
        List<VirtualScheduler.Task> l = h.env.scheduler.history();
        return l.get(l.size() - 1);
    }

    private static FakeEnvironment.Draw lastDraw(PathHarness h) {
        return h.env.draws.get(h.env.draws.size() - 1);
    }
}
