package org.rds4j.core.path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import org.jetbrains.lincheck.Lincheck;
import org.junit.jupiter.api.Test;
import org.rds4j.core.util.ConcurrentRun;

/**
 * A reader taking back its posted buffer in the middle of a message ({@link PostedBuffer#revoke}) while the I/O
 * thread begins its next read into it ({@link PostedBuffer#beginWrite}), model-checked by Lincheck at every shared
 * read and write of the state word and the buffers. In every interleaving the I/O thread never writes into the
 * reader's buffer once the reader has left with it, and every byte of the message ends in the arrival's own buffer,
 * in order, whichever side went first.
 */
class PostedBufferLincheckTest {
    private static final int INVOCATIONS = 150;

    @Test
    void aRevokedBufferIsNeverWrittenAndNoByteIsLost() {
        Lincheck.runConcurrentTest(INVOCATIONS, () -> {
            PostedBuffer posted = new PostedBuffer();
            ByteBuffer mine = ByteBuffer.allocate(8);
            Arrival a = new Arrival();
            a.prepare(4, 0);
            posted.post(mine, Thread.currentThread());
            assertTrue(posted.claim(a, 4));
            a.target().put((byte) 1);               // the first read brought one byte, into the reader's buffer
            posted.endWrite();
            boolean[] readerLeft = new boolean[1];
            ConcurrentRun.all(
                    () -> {                             // the I/O thread's next read: one more byte
                        if (posted.beginWrite()) {
                            synchronized (readerLeft) {
                                assertFalse(readerLeft[0], "the I/O thread writes into a buffer its reader took back");
                            }
                            a.target().put((byte) 2);
                            posted.endWrite();
                        } else {
                            posted.redirected(a);
                            a.payload.put((byte) 2);
                        }
                    },
                    () -> {                             // the reader stops waiting: it takes its buffer back
                        for (int i = 0; i < 100 && posted.reader() != null; i++) {
                            assertNull(posted.revoke(), "nothing whole to return");
                        }
                        synchronized (readerLeft) {
                            readerLeft[0] = posted.reader() == null;
                        }
                        assertTrue(readerLeft[0], "the reader could not take its buffer back");
                    });
            if (a.posted != null) {                 // the I/O thread's read came first: its next one finds it revoked
                assertFalse(posted.beginWrite(), "a revoked buffer taken for a read");
                posted.redirected(a);
            }
            assertTrue(posted.idle());
            assertEquals(0, mine.position(), "the reader's buffer is left where it was posted");
            assertEquals(2, a.payload.position(), "bytes of the message in the arrival");
            assertEquals(1, a.payload.get(0));
            assertEquals(2, a.payload.get(1));
        });
    }
}
