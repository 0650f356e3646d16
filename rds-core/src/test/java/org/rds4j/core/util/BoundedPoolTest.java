package org.rds4j.core.util;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * {@link BoundedPool} and {@link GrowingPool}: the pools that carry a socket's arrivals between its I/O threads and its
 * readers. Single-threaded, what goes in comes out once and in order; with threads taking and giving back at once, no
 * object is ever out to two threads at the same time and none is lost.
 */
class BoundedPoolTest {
    /** A pooled object that knows whether somebody holds it. */
    static final class Token {
        final int id;
        final AtomicBoolean held = new AtomicBoolean();

        Token(int id) {
            this.id = id;
        }
    }

    @Test
    void capacityIsRoundedUpToAPowerOfTwoOfAtLeastFour() {
        assertEquals(4, new BoundedPool<>(1, Object::new).capacity());
        assertEquals(4, new BoundedPool<>(2, Object::new).capacity());
        assertEquals(4, new BoundedPool<>(4, Object::new).capacity());
        assertEquals(8, new BoundedPool<>(5, Object::new).capacity());
        assertEquals(8, new BoundedPool<>(8, Object::new).capacity());
        assertEquals(16, new BoundedPool<>(9, Object::new).capacity());
    }

    @Test
    void givesBackInTheOrderGivenAndIsEmptyAfterwards() {
        BoundedPool<Integer> pool = new BoundedPool<>(8, () -> -1);
        assertNull(pool.poll());
        for (int round = 0; round < 5; round++) {           // several laps: positions wrap past the capacity
            for (int i = 0; i < 8; i++) {
                assertTrue(pool.offer(round * 8 + i));
            }
            assertFalse(pool.offer(99), "a full pool drops what is given back");
            for (int i = 0; i < 8; i++) {
                assertEquals(round * 8 + i, pool.poll());
            }
            assertNull(pool.poll());
        }
    }

    @Test
    void takeMakesANewObjectWhenEmpty() {
        AtomicInteger made = new AtomicInteger();
        BoundedPool<Integer> pool = new BoundedPool<>(4, made::incrementAndGet);
        assertEquals(1, pool.take());
        pool.offer(42);
        assertEquals(42, pool.take());
        assertEquals(2, pool.take());
    }

    @Test
    void growingPoolDoublesUpToItsMaximumAndKeepsWhatItHeld() {
        GrowingPool<Token> pool = new GrowingPool<>(2, 8, () -> new Token(-1));
        List<Token> given = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            Token t = new Token(i);
            given.add(t);
            assertTrue(pool.offer(t), "grows to 8");
        }
        assertFalse(pool.offer(new Token(8)), "no further than its maximum");
        Set<Token> back = new HashSet<>();
        for (int i = 0; i < 8; i++) {
            back.add(pool.take());
        }
        assertEquals(new HashSet<>(given), back);
        assertEquals(-1, pool.take().id, "empty again: a new one");
    }

    /**
     * Threads circulate a fixed set of tokens through one pool as fast as they can, as I/O threads and readers do. A
     * token taken while another thread still holds it, or one given back twice, would show as a failed claim; a lost
     * one as a token missing at the end. The pool is smaller than the set, so it runs full and empty all the time.
     */
    @Test
    void noTokenIsEverHeldTwiceOrLostWhileThreadsTakeAndGiveBack() throws Exception {
        int threads = 4;
        int rounds = 200_000;
        int tokens = 64;
        BoundedPool<Token> pool = new BoundedPool<>(32, () -> null);
        List<Token> all = new ArrayList<>();
        for (int i = 0; i < tokens; i++) {
            all.add(new Token(i));
        }
        // Half start in the pool, the rest with the threads (a full pool would drop them).
        List<List<Token>> inHand = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            inHand.add(new ArrayList<>());
        }
        for (int i = 0; i < tokens; i++) {
            Token tok = all.get(i);
            if (i < 32) {
                assertTrue(pool.offer(tok));
            } else {
                tok.held.set(true);
                inHand.get(i % threads).add(tok);
            }
        }
        AtomicInteger doubleClaims = new AtomicInteger();
        CountDownLatch start = new CountDownLatch(1);
        ExecutorService exec = Executors.newFixedThreadPool(threads);
        try {
            List<Future<List<Token>>> results = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                List<Token> mine = inHand.get(t);
                results.add(exec.submit(() -> {
                    start.await();
                    for (int r = 0; r < rounds; r++) {
                        Token got = pool.poll();
                        if (got != null) {
                            if (!got.held.compareAndSet(false, true)) {
                                doubleClaims.incrementAndGet();
                            }
                            mine.add(got);
                        }
                        if (!mine.isEmpty() && (got == null || (r & 1) == 0)) {
                            Token back = mine.remove(mine.size() - 1);
                            back.held.set(false);
                            if (!pool.offer(back)) {
                                back.held.set(true);
                                mine.add(back);             // full: keep it and try again later
                            }
                        }
                    }
                    return mine;
                }));
            }
            start.countDown();
            Set<Integer> seen = new HashSet<>();
            for (Future<List<Token>> f : results) {
                for (Token tok : f.get(60, TimeUnit.SECONDS)) {
                    assertTrue(seen.add(tok.id), "token " + tok.id + " held by two threads at the end");
                }
            }
            for (Token tok; (tok = pool.poll()) != null; ) {
                assertTrue(seen.add(tok.id), "token " + tok.id + " both in the pool and held");
                assertFalse(tok.held.get(), "token " + tok.id + " in the pool but marked held");
            }
            assertEquals(0, doubleClaims.get(), "tokens taken while another thread held them");
            assertEquals(tokens, seen.size(), "tokens lost");
        } finally {
            exec.shutdownNow();
            assertTrue(exec.awaitTermination(10, TimeUnit.SECONDS));
        }
    }

    @Test
    void pollOfAnEmptyPoolNeverMakesAnObject() {
        BoundedPool<Object> pool = new BoundedPool<>(4, () -> {
            throw new AssertionError("poll must not make objects");
        });
        assertNull(pool.poll());
        Object o = new Object();
        pool.offer(o);
        assertNotNull(pool.poll());
        pool.offer(o);
        assertSame(o, pool.take());
    }
}
