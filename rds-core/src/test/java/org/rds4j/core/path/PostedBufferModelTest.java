package org.rds4j.core.path;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;

/**
 * The lent buffer's state machine ({@link PostedBuffer}) driven the way the receive queue and a connection drive it,
 * with the two sides' steps interleaved at random: a message of any length arrives in reads of any size; between two
 * reads the reader may stop waiting (a timeout, something else to return, a close); the message may turn out a
 * duplicate, or its connection may be lost. Whatever happens:
 * <ul>
 *   <li>the message ends whole in exactly one place: the reader's buffer (taken in place), or its arrival's own
 *       buffer (queued), or nowhere if it was a duplicate or its connection was lost;</li>
 *   <li>once the reader has stopped waiting, nothing more is written into its buffer, and its position is where it
 *       was posted;</li>
 *   <li>once both sides are done, the buffer is idle: the next reader may lend its own.</li>
 * </ul>
 * Single-threaded: the two sides take turns at the points where the real ones synchronise (the queue's lock, the
 * read boundaries); what runs concurrently inside a read is the other side's wait, which {@link
 * PostedBuffer#writing()} stands for.
 */
class PostedBufferModelTest {

    @Property(tries = 1000)
    void aMessageEndsWholeInExactlyOnePlaceAndTheReadersBufferIsLeftAloneOnceItStopsWaiting(@ForAll long seed) {
        Random r = new Random(seed);
        int length = 1 + r.nextInt(5000);
        byte[] payload = new byte[length];
        r.nextBytes(payload);
        int start = r.nextInt(50);
        ByteBuffer dst = ByteBuffer.allocate(start + length + r.nextInt(50)).position(start);
        Thread reader = Thread.currentThread();
        PostedBuffer posted = new PostedBuffer();
        Arrival a = new Arrival();
        a.prepare(length, 0);

        posted.post(dst, reader);
        assertTrue(posted.posted());
        assertTrue(posted.claim(a, length), "a posted buffer with room is claimed");
        assertSame(dst, a.target());

        // The "decoder": writes each read into the arrival's current target; redirected as PathConnection does.
        ByteBuffer target = a.target();
        int written = 0;
        boolean readerGone = false;
        byte[] readersBytesWhenGone = null;
        Arrival queued = null;
        boolean inPlace = false;
        boolean dropped = false;
        int duplicateOrLostAt = r.nextInt(4) == 0 ? r.nextInt(length + 1) : -1;   // bytes in when it is dropped
        boolean lostConnection = r.nextBoolean();
        boolean firstRead = true;
        while (written < length && !dropped) {
            if (!firstRead) {
                if (a.posted != null && !a.posted.beginWrite()) {
                    target = a.payload;             // decoder.redirectPayload(pending.payload)
                    posted.redirected(a);
                }
            }
            firstRead = false;
            int n = Math.min(length - written, 1 + r.nextInt(1500));
            target.put(payload, written, n);
            written += n;
            if (written == length) {
                if (duplicateOrLostAt >= 0 && !lostConnection) {
                    if (a.posted != null) {
                        posted.unclaim(a);          // a duplicate: the reader's buffer goes back to waiting
                    }
                    dropped = true;
                } else if (a.posted != null) {
                    posted.fill();
                } else {
                    a.payload.flip();
                    queued = a;                      // as any other arrival
                }
                break;
            }
            if (a.posted != null) {
                posted.endWrite();
            }
            assertFalse(posted.writing(), "between reads the reader may act");
            if (lostConnection && duplicateOrLostAt >= 0 && written >= duplicateOrLostAt) {
                if (a.posted != null) {
                    posted.unclaim(a);              // PathConnection.onClosed: the connection is gone mid-message
                }
                dropped = true;
                break;
            }
            if (!readerGone && r.nextInt(4) == 0) {
                readerGone = true;                  // the reader stops waiting, mid-message
                Arrival whole = revokeAll(posted, reader);
                assertNull(whole, "no whole message to queue while the message is half in");
                assertEquals(start, dst.position(), "the reader's position is where it was posted");
                readersBytesWhenGone = bytes(dst);
            }
        }

        // The reader's turn after the I/O side is done with this message.
        if (!readerGone) {
            if (posted.filled() && r.nextBoolean()) {
                Arrival taken = posted.takeFilled();
                assertSame(a, taken);
                assertTrue(taken.inPlace());
                inPlace = true;
            } else {
                Arrival whole = revokeAll(posted, reader);   // stops waiting with or without a message filled
                if (whole != null) {
                    assertSame(a, whole);
                    queued = whole;
                }
            }
            assertEquals(start, dst.position(), "the reader's position is where it was posted");
        } else {
            assertArrayEquals(readersBytesWhenGone, bytes(dst), "nothing written into the buffer once the reader left");
        }
        if (dropped) {
            assertNull(queued);
            assertFalse(inPlace);
        } else if (inPlace) {
            assertArrayEquals(payload, Arrays.copyOfRange(dst.array(), start, start + length));
            assertNull(queued);
        } else {
            assertNotNull(queued, "the message is queued when the reader did not take it in place");
            byte[] got = new byte[queued.length()];
            queued.payload().get(0, got);
            assertArrayEquals(payload, got, "the queued message is whole");
        }
        // Both sides are done with the message (a revoked claim is left by the I/O side at its next read or when
        // its connection goes): the next reader may lend its buffer.
        assertTrue(posted.idle(), "the buffer is free for the next reader");
        assertNull(a.posted);
    }

    /** The reader's side of ReceiveQueue.reclaim, with no I/O thread inside a read (single-threaded here). */
    private static Arrival revokeAll(PostedBuffer posted, Thread reader) {
        Arrival whole = null;
        for (int i = 0; posted.reader() == reader; i++) {
            assertFalse(posted.writing());
            assertTrue(i < 3, "the reader takes its buffer back in a step or two");
            Arrival w = posted.revoke();
            if (w != null) {
                whole = w;
            }
        }
        return whole;
    }

    private static byte[] bytes(ByteBuffer b) {
        return b.array().clone();
    }
}
