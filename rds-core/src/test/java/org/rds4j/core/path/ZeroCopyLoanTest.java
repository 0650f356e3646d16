package org.rds4j.core.path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.rds4j.core.spi.PayloadLoan;

/** When a zero-copy send's cookie is reported: once the peer has the message and the transport gave its bytes back. */
class ZeroCopyLoanTest {

    private final CookieRecorder owner = new CookieRecorder();

    private OutgoingMessage send(OutgoingMessage m, ByteBuffer caller, int cookie) {
        return m.fillZeroCopy(1, 2, caller.slice(), cookie, owner);
    }

    @Test
    void onlyLargeWritableDirectMemoryIsLent() {
        OutgoingMessage m = new OutgoingMessage();
        assertNull(send(m, ByteBuffer.allocateDirect(MessageBuffer.DIRECT_MIN - 1), 1).loan(), "small: copied");
        assertNull(send(m, ByteBuffer.allocate(MessageBuffer.DIRECT_MIN), 2).loan(), "heap: copied");
        assertNull(send(m, ByteBuffer.allocateDirect(MessageBuffer.DIRECT_MIN).asReadOnlyBuffer(), 3).loan(),
                "read-only: a transport's buffer cannot wrap it");
        PayloadLoan loan = send(m, ByteBuffer.allocateDirect(MessageBuffer.DIRECT_MIN), 4).loan();
        assertNotNull(loan);
        ByteBuffer memory = loan.memory();
        assertNotSame(m.payload, memory, "a view of its own, whose position the borrower may move");
        memory.position(100);
        assertEquals(0, m.payload.position());
        m.payload.put(5, (byte) 42);
        assertEquals(42, memory.get(5), "the caller's bytes themselves");
    }

    @Test
    void givenBackBeforeTheAcknowledgementTheSocketReportsTheCookie() {
        OutgoingMessage m = send(new OutgoingMessage(), ByteBuffer.allocateDirect(40_000), 7);
        PayloadLoan loan = m.loan();
        assertTrue(loan.borrow());
        loan.giveBack();                                   // written: the steady-state order
        assertTrue(m.completeZeroCopy(), "nothing reads the bytes any more: report now");
        assertEquals(List.of(), owner.reported());
        m.returnLentPayload();
        assertFalse(((ZeroCopyLoan) loan).holdsCallerMemory(), "the pool keeps no reference to the caller's memory");
    }

    @Test
    void stillLentWhenAcknowledgedTheGiveBackReportsTheCookieOnce() {
        OutgoingMessage m = send(new OutgoingMessage(), ByteBuffer.allocateDirect(40_000), 7);
        PayloadLoan loan = m.loan();
        assertTrue(loan.borrow());
        assertFalse(loan.borrow(), "one borrower at a time");
        assertFalse(m.completeZeroCopy(), "acknowledged over a newer connection while an older one still writes");
        m.returnLentPayload();

        // The socket reuses the message for its next zero-copy send before the old write is done: a new loan.
        send(m, ByteBuffer.allocateDirect(50_000), 8);
        PayloadLoan next = m.loan();
        assertNotSame(loan, next);
        assertEquals(List.of(), owner.reported());

        loan.giveBack();
        assertEquals(List.of(7), owner.reported(), "the old cookie, once, when its bytes are given back");
        assertTrue(next.borrow());
        next.giveBack();
        assertTrue(m.completeZeroCopy());
        assertEquals(List.of(7), owner.reported(), "the new message's cookie is the socket's to report");
    }

    @Test
    void aLoanGivenBackIsUsedAgainForTheNextSend() {
        OutgoingMessage m = send(new OutgoingMessage(), ByteBuffer.allocateDirect(40_000), 1);
        PayloadLoan loan = m.loan();
        assertTrue(loan.borrow());
        loan.memory();
        loan.attach("wrapper of the first caller's memory");
        loan.giveBack();
        assertTrue(m.completeZeroCopy());
        m.returnLentPayload();
        send(m, ByteBuffer.allocateDirect(40_000), 2);
        assertSame(loan, m.loan(), "no allocation per send once given back");
        assertNull(loan.attachment(), "a wrapper of the previous caller's memory is forgotten");
    }
}
