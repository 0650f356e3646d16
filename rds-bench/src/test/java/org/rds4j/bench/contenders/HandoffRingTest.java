package org.rds4j.bench.contenders;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link HandoffRing}, the hand-off of the {@code nio-handoff} contenders: a producer and a consumer thread move
 * messages of seeded random lengths through a small ring, so that both sides wait often (parking, or yielding when
 * spinning), and every message must come out whole and in order; a waiter on a closed link gives up.
 */
class HandoffRingTest {
    private static final int MESSAGES = 200_000;
    private static final int MAX = 100;
    private static final long SEED = 20261127L;

    @ParameterizedTest(name = "spin {0}")
    @ValueSource(booleans = {false, true})
    void everyMessageComesOutWholeAndInOrder(boolean spin) throws Exception {
        HandoffRing ring = new HandoffRing(4, MAX, spin);
        HandoffLinkState state = new HandoffLinkState();
        CompletableFuture<Void> producer = CompletableFuture.runAsync(() -> {
            SplittableRandom random = new SplittableRandom(SEED);
            try {
                for (int i = 0; i < MESSAGES; i++) {
                    ByteBuffer slot = ring.claim(state);
                    int len = random.nextInt(MAX + 1);
                    for (int j = 0; j < len; j++) {
                        slot.put((byte) (i + j));
                    }
                    ring.publish();
                    ring.wakeConsumer();
                }
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        });
        try {
            SplittableRandom random = new SplittableRandom(SEED);
            for (int i = 0; i < MESSAGES; i++) {
                ByteBuffer m = ring.take(state);
                int len = random.nextInt(MAX + 1);
                assertEquals(len, m.remaining(), "seed " + SEED + ": length of message " + i);
                for (int j = 0; j < len; j++) {
                    assertEquals((byte) (i + j), m.get(), "seed " + SEED + ": message " + i + " byte " + j);
                }
                ring.free();
                ring.wakeProducer();
            }
            producer.get(60, TimeUnit.SECONDS);
            assertNull(ring.peek(), "nothing beyond what was sent");
        } finally {
            state.close();
            producer.cancel(true);
        }
    }

    @ParameterizedTest(name = "spin {0}")
    @ValueSource(booleans = {false, true})
    void waitersGiveUpOnceTheLinkCloses(boolean spin) throws Exception {
        HandoffRing ring = new HandoffRing(4, 8, spin);
        HandoffLinkState state = new HandoffLinkState();
        for (int i = 0; i < 4; i++) {
            ring.claim(state);
            ring.publish();
        }
        assertTrue(ring.full());
        CompletableFuture<ByteBuffer> producer = CompletableFuture.supplyAsync(() -> {
            try {
                return ring.claim(state);
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        });
        HandoffRing empty = new HandoffRing(4, 8, spin);
        CompletableFuture<ByteBuffer> consumer = CompletableFuture.supplyAsync(() -> {
            try {
                return empty.take(state);
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        });
        state.close();
        ring.wakeAll();
        empty.wakeAll();
        Exception p = assertThrows(Exception.class, () -> producer.get(10, TimeUnit.SECONDS));
        Exception c = assertThrows(Exception.class, () -> consumer.get(10, TimeUnit.SECONDS));
        assertTrue(p.getCause() instanceof IllegalStateException, p.toString());
        assertTrue(c.getCause() instanceof IllegalStateException, c.toString());
    }
}
