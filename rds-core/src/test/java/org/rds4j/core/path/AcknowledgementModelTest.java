package org.rds4j.core.path;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.function.BiConsumer;
import java.util.function.Predicate;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.state.Action;
import net.jqwik.api.state.ActionChain;
import net.jqwik.api.state.Transformer;

/**
 * A model-based test of the acknowledgement machinery towards a kernel peer (docs/reliability.md, "Kernel peers"):
 * a real {@link ConnectionPath} against the simulated kernel of {@link KernelPeerHarness}, driven by random
 * interleavings of application sends, transmit passes, the peer reading and answering, lost pongs, pings cut by
 * resets, resets with the peer's pongs kept (late answers) or lost, peer restarts, phases in which the peer answers
 * no ping, and virtual time passing (the 200 ms fallback, the 2 s expiry, the 5 s give-up all fire).
 *
 * <p>Invariants, checked as things happen: (1) safety: a message is released to its socket only if the current peer
 * generation has it, and messages are settled oldest first, so what is released is a prefix of what the peer has;
 * (2) liveness: whenever the peer answers (a "settle" step, at random points and at the end of every chain), every
 * held message is released within {@link KernelPeerHarness#SETTLE_BOUND_NANOS} of virtual time; (3) a message fails
 * UNACKNOWLEDGED only after 5 s without a pong, and PEER_RESTARTED only after a restart. jqwik reports the seed of a
 * failing chain; all randomness is jqwik's (the path's backoff draws come from a seed jqwik chooses).
 */
class AcknowledgementModelTest {
    private static long longestSettleNanos;
    private static long chains;
    private static long released;
    private static long lostPings;
    private static long lateAnswers;
    private static long failedUnacknowledged;
    private static long failedPeerRestarted;

    @Property(tries = 500)
    void kernelPeerAcknowledgementsAreSafeAndLive(@ForAll("chains") ActionChain<KernelPeerHarness> chain) {
        chain.run();
        KernelPeerHarness h = chain.finalState().orElseThrow();
        h.settle();
        record(h);
    }

    // ------------------------------------------------------------------------------------------------ regressions
    // What the property found in the production code, as fixed scenarios (all failed before the fixes).

    /**
     * A peer that answers no ping for three minutes (net.rds.ping_enable=0), then answers again. Every retry used to
     * take a fresh port and quarantine it on expiry; once all 64 were quarantined the path never pinged again, and
     * what it sent afterwards was held for good.
     */
    @Example
    void aPeerSilentForMinutesIsHeardAgain() {
        KernelPeerHarness h = upAndProbed();
        h.peerAnswers(false);
        h.send(3);
        for (int i = 0; i < 1800; i++) {                 // 3 minutes in steps of 100 ms, the transport keeping up
            pump(h);
            h.advance(100 * KernelPeerHarness.MS);
        }
        assertEquals(0, h.outstanding.size(), "the three messages failed UNACKNOWLEDGED");
        h.peerAnswers(true);
        h.send(3);
        h.settle();
    }

    /**
     * The transport writes nothing for 150 s (the peer does not read): acknowledgement pings queued meanwhile used to
     * expire unwritten, each quarantining a port, until none was left and the path never asked again.
     */
    @Example
    void pingsThatNeverLeftDoNotUseUpPorts() {
        KernelPeerHarness h = upAndProbed();
        h.send(2);
        h.transmit(10);
        h.transmitted();
        for (int i = 0; i < 1500; i++) {                 // 150 s
            h.advance(100 * KernelPeerHarness.MS);
        }
        h.send(2);
        h.settle();
    }

    /**
     * Ports quarantined under an old peer generation leave quarantine when the peer restarts: its pongs can no longer
     * be heard. Here 64 connections in a row each lose a ping to a reset before the peer reads it.
     */
    @Example
    void aRestartedPeerFreesTheOldPeersPorts() {
        KernelPeerHarness h = upAndProbed();
        for (int i = 0; i < 64; i++) {
            h.send(1);
            h.transmit(10);
            h.transmitted();                              // all left: a ping is queued
            h.transmit(10);                               // and written; the reset cuts it before the peer reads it
            h.reset(false);
            h.advance(2 * FakeEnvironment.MAX_NANOS);
            h.connect();
        }
        h.peerRestarts();
        h.advance(2 * FakeEnvironment.MAX_NANOS);
        h.connect();
        h.peerDelivers(10);                               // its probe first: all 64 messages go to the new peer
        h.send(2);
        h.settle();
        assertEquals(0, h.failedPeerRestarted, "nothing had been written to the new peer before its probe");
    }

    /**
     * After a peer restart rds4j used to number what was left from 1 again, while the new peer had already taken
     * higher numbers (messages resent on its connection before rds4j read its probe): after a reset the kernel's
     * duplicate rule dropped the renumbered messages, and the next pong released them unread.
     */
    @Example
    void numbersKeepRisingAfterAPeerRestart() {
        KernelPeerHarness h = upAndProbed();
        h.send(4);
        h.transmit(10);                                   // written, never read: the peer restarts
        h.peerRestarts();
        h.advance(2 * FakeEnvironment.MAX_NANOS);
        h.connect();
        h.transmit(10);                                   // our probe and the 4 resent, with their numbers
        h.peerReads(10, false);                           // the new peer takes them all
        h.peerDelivers(10);                               // its probe: rds4j flushes the 4 (PEER_RESTARTED)
        long releasedBefore = h.released;
        h.send(2);
        h.transmit(10);
        h.reset(false);                                   // cut before the peer read them
        h.advance(2 * FakeEnvironment.MAX_NANOS);
        h.connect();
        h.settle();
        assertEquals(2, h.released - releasedBefore, "the 2 messages sent after the restart reached the new peer");
    }

    /** A path up, the peer's probe read (rds4j knows its generation). */
    private static KernelPeerHarness upAndProbed() {
        KernelPeerHarness h = new KernelPeerHarness(7);
        h.send(1);
        h.connect();
        h.peerDelivers(10);
        h.settle();
        return h;
    }

    /** The transport and the peer do everything they can now. */
    private static void pump(KernelPeerHarness h) {
        if (h.connectPending()) {
            h.connect();
        }
        if (h.up()) {
            h.transmit(Integer.MAX_VALUE);
            h.transmitted();
            h.peerReads(Integer.MAX_VALUE, false);
            if (!h.peerOutbox.isEmpty()) {
                h.peerDelivers(Integer.MAX_VALUE);
            }
        }
    }

    @AfterContainer
    static void summary() {
        System.out.printf("acknowledgement model: %d chains, %d messages released, %d failed UNACKNOWLEDGED, %d failed"
                        + " PEER_RESTARTED, %d pongs lost, %d late answers kept over resets, longest settle %d ms%n",
                chains, released, failedUnacknowledged, failedPeerRestarted, lostPings, lateAnswers,
                longestSettleNanos / KernelPeerHarness.MS);
    }

    private static synchronized void record(KernelPeerHarness h) {
        chains++;
        released += h.released;
        lostPings += h.pingsLost;
        lateAnswers += h.lateAnswersKept;
        failedUnacknowledged += h.failedUnacknowledged;
        failedPeerRestarted += h.failedPeerRestarted;
        longestSettleNanos = Math.max(longestSettleNanos, h.longestSettleNanos);
    }

    @Provide
    Arbitrary<ActionChain<KernelPeerHarness>> chains() {
        long ms = KernelPeerHarness.MS;
        return Arbitraries.longs().flatMap(seed -> ActionChain.<KernelPeerHarness>startWith(
                        () -> new KernelPeerHarness(seed))
                .withAction(4, action("send", h -> true, Arbitraries.integers().between(1, 3),
                        KernelPeerHarness::send))
                .withAction(4, action("connect", KernelPeerHarness::connectPending, Arbitraries.just(0),
                        (h, x) -> h.connect()))
                .withAction(5, action("transmit", KernelPeerHarness::up, Arbitraries.integers().between(1, 6),
                        KernelPeerHarness::transmit))
                .withAction(3, action("transmitted", KernelPeerHarness::up, Arbitraries.just(0),
                        (h, x) -> h.transmitted()))
                .withAction(5, action("peer reads", h -> h.up() && !h.toPeer.isEmpty(),
                        Combinators.combine(Arbitraries.integers().between(1, 6),
                                Arbitraries.frequency(Tuple.of(1, true), Tuple.of(5, false))).as(Tuple::of),
                        (h, a) -> h.peerReads(a.get1(), a.get2())))
                .withAction(4, action("peer delivers", h -> h.up() && !h.peerOutbox.isEmpty(),
                        Arbitraries.integers().between(1, 4), KernelPeerHarness::peerDelivers))
                .withAction(1, action("reset", KernelPeerHarness::up, Arbitraries.of(true, false),
                        KernelPeerHarness::reset))
                .withAction(1, action("peer restarts", h -> true, Arbitraries.just(0), (h, x) -> h.peerRestarts()))
                .withAction(1, action("peer answers", h -> true, Arbitraries.of(true, false),
                        KernelPeerHarness::peerAnswers))
                .withAction(3, action("time passes", h -> true, Arbitraries.longs().between(10, 400).map(t -> t * ms),
                        KernelPeerHarness::advance))
                .withAction(1, action("a long time passes", h -> true,
                        Arbitraries.longs().between(1, 90).map(t -> t * 1000 * ms), KernelPeerHarness::advance))
                .withAction(1, action("settle", h -> true, Arbitraries.just(0), (h, x) -> h.settle()))
                .withMaxTransformations(150));
    }

    private static <T> Action.Independent<KernelPeerHarness> action(String name, Predicate<KernelPeerHarness> pre,
                                                                    Arbitrary<T> argument,
                                                                    BiConsumer<KernelPeerHarness, T> op) {
        return new Action.Independent<>() {
            @Override
            public boolean precondition(KernelPeerHarness h) {
                return pre.test(h);
            }

            @Override
            public Arbitrary<Transformer<KernelPeerHarness>> transformer() {
                return argument.map(arg -> Transformer.mutate(name + " " + arg, h -> op.accept(h, arg)));
            }
        };
    }
}
