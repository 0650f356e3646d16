package org.rds4j.core.path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;
import org.rds4j.core.spi.PayloadLoan;

/** What a pooled message lends a transport, and that nothing it lent is written while out on loan. */
class MessageBufferTest {

    private static ByteBuffer data(int len, int seed) {
        ByteBuffer b = ByteBuffer.allocate(len);
        for (int i = 0; i < len; i++) {
            b.put(i, (byte) (i * 31 + seed));
        }
        return b;
    }

    @Test
    void onlyLargeOwnPayloadsAreLent() {
        OutgoingMessage m = new OutgoingMessage();
        m.fill(1, 2, data(100, 1), null);
        assertNull(m.loan(), "a small payload is on the heap: copied");
        m.fill(1, 2, data(MessageBuffer.DIRECT_MIN, 1), null);
        assertNotNull(m.loan());
        assertTrue(m.payload.isDirect());
        m.fillZeroCopy(1, 2, ByteBuffer.allocateDirect(MessageBuffer.DIRECT_MIN), 9, null);
        assertTrue(m.loan() instanceof ZeroCopyLoan, "the caller's memory goes through a loan of its own");
        m.returnLentPayload();
        assertNull(new OutgoingMessage(1, 2, ByteBuffer.allocateDirect(MessageBuffer.DIRECT_MIN), null, null,
                false).loan(), "a message that is not pooled has no buffer of its own");
    }

    @Test
    void aBufferOutOnLoanIsNeitherLentTwiceNorRefilled() {
        OutgoingMessage m = new OutgoingMessage();
        int len = 40_000;
        m.fill(1, 2, data(len, 1), null);
        ByteBuffer first = m.payload;
        PayloadLoan loan = m.loan();
        assertTrue(loan.borrow());
        ByteBuffer view = loan.memory();
        assertEquals(first.capacity(), view.remaining());
        assertFalse(loan.borrow(), "one borrower at a time");

        // The peer acknowledged (or the send was cancelled) while the transport still writes: the socket reuses
        // the message, which must not write over what the transport reads.
        m.fill(1, 2, data(len, 2), null);
        assertNotSame(first, m.payload);
        for (int i = 0; i < len; i++) {
            assertEquals((byte) (i * 31 + 1), view.get(i), "byte " + i + " of the lent payload changed");
        }
        assertEquals((byte) (5 * 31 + 2), m.payload.get(5));
        PayloadLoan second = m.loan();
        assertNotSame(loan, second);
        loan.giveBack();                          // the old borrower's give-back leaves the new buffer's loan alone
        assertTrue(second.borrow());
        assertFalse(second.borrow());
        second.giveBack();

        ByteBuffer current = m.payload;
        m.fill(1, 2, data(len, 3), null);
        assertSame(current, m.payload, "given back: reused");
        assertFalse(((MessageBuffer) m.loan()).isLent());
    }
}
