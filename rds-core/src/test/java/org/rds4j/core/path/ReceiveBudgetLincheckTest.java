package org.rds4j.core.path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.jetbrains.lincheck.Lincheck;
import org.junit.jupiter.api.Test;
import org.rds4j.core.stack.RdsCounters;
import org.rds4j.core.util.ConcurrentRun;

/**
 * {@link PeerReceiveBudget} and {@link StackReceiveBudget}: I/O threads stopping a peer's connections after a read
 * ({@link PeerReceiveBudget#pauseIfOver}) while readers give the excess back ({@link PeerReceiveBudget#release}),
 * model-checked by Lincheck at every shared read and write, compare-and-set and monitor. Each side writes its own
 * word (the flag, the count) before it reads the other's, so in every interleaving one of them sees the other: once
 * the readers have taken the excess back, no connection is left stopped.
 */
class ReceiveBudgetLincheckTest {
    private static final int INVOCATIONS = 150;

    /** A connection's reading switch, as the transport keeps it: what the budget last asked for. */
    private static final class Reading implements PeerReceiveBudget.Reading {
        private final String name;
        private volatile boolean readable = true;

        Reading(String name) {
            this.name = name;
        }

        @Override
        public void setReadable(boolean r) {
            readable = r;
        }

        @Override
        public String toString() {
            return name;
        }
    }

    private static PeerReceiveBudget peer(String name, long bound, StackReceiveBudget stack) {
        return new PeerReceiveBudget(name, new RdsCounters(), bound, stack);
    }

    /** One peer over its own bound: its I/O thread stops it while a reader takes the excess back. */
    @Test
    void aPeerStoppedWhileItsReaderCatchesUpReadsAgain() {
        Lincheck.runConcurrentTest(INVOCATIONS, () -> {
            StackReceiveBudget stack = new StackReceiveBudget(1_000);
            PeerReceiveBudget p = peer("peer", 4, stack);
            Reading a = new Reading("a");
            p.charge(5);                                // the read that put the peer over its bound
            ConcurrentRun.all(
                    () -> p.pauseIfOver(a),             // that read's I/O thread
                    () -> p.release(5));                // a reader takes it back
            assertEquals(0, p.held());
            assertEquals(0, stack.held());
            assertTrue(a.readable, "a connection left stopped with nothing held");
            assertFalse(p.isPaused(), "paused with nothing held");
        });
    }

    /**
     * Two peers within their own bounds but together over the stack's: both stop, and once a reader takes one
     * peer's excess, the stack is under its resume mark and the other peer, still holding some, reads again too.
     */
    @Test
    void peersStoppedByTheStackReadAgainOnceItDrains() {
        Lincheck.runConcurrentTest(INVOCATIONS, () -> {
            StackReceiveBudget stack = new StackReceiveBudget(4);
            PeerReceiveBudget p = peer("p", 1_000, stack);
            PeerReceiveBudget q = peer("q", 1_000, stack);
            Reading a = new Reading("a");
            Reading b = new Reading("b");
            p.charge(1);
            q.charge(4);                                // together over the stack's bound
            ConcurrentRun.all(
                    () -> p.pauseIfOver(a),
                    () -> q.pauseIfOver(b),
                    () -> q.release(4));
            assertEquals(1, stack.held());              // under the stack's resume mark, 2
            assertTrue(a.readable, "a peer left stopped by a stack under its resume mark");
            assertTrue(b.readable, "a connection left stopped with nothing held");
            assertFalse(p.isPaused(), "paused by a stack under its resume mark");
            assertFalse(q.isPaused(), "paused with nothing held");
        });
    }
}
