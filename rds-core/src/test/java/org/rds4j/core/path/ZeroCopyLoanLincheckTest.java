package org.rds4j.core.path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.List;
import org.jetbrains.lincheck.Lincheck;
import org.junit.jupiter.api.Test;
import org.rds4j.core.util.ConcurrentRun;

/**
 * The hand-back of a zero-copy payload ({@link ZeroCopyLoan}, {@link org.rds4j.core.spi.PayloadLoan}),
 * model-checked by Lincheck: the transport borrowing and giving the bytes back, interleaved at every shared read and
 * write with the path completing the message and the socket reusing the loan for its next send. In every interleaving
 * the caller's cookie is reported exactly once, and it is the cookie of the message that was lent, and no two
 * borrowers hold the bytes at once.
 */
class ZeroCopyLoanLincheckTest {
    private static final int INVOCATIONS = 100;


    @Test
    void aCookieIsReportedOnceWhoeverFinishesLast() {
        Lincheck.runConcurrentTest(INVOCATIONS, () -> {
            CookieRecorder socket = new CookieRecorder();
            ZeroCopyLoan loan = new ZeroCopyLoan();
            loan.set(ByteBuffer.allocateDirect(8), 7, socket);
            int[] holders = new int[1];
            Runnable borrower = () -> {
                if (loan.borrow()) {
                    synchronized (holders) {
                        holders[0]++;
                        assertEquals(1, holders[0], "two borrowers hold the bytes at once");
                    }
                    loan.memory();
                    synchronized (holders) {
                        holders[0]--;
                    }
                    loan.giveBack();
                }
            };
            ConcurrentRun.all(borrower, borrower, () -> {
                if (loan.completeUnlessLent()) {
                    socket.zeroCopyCompleted(7);      // the path reports it, as SendQueue's release does
                }
            });
            assertEquals(List.of(7), socket.reported());
        });
    }

    @Test
    void theGiveBackReportsTheLentMessagesCookieEvenIfTheLoanIsReusedAtOnce() {
        Lincheck.runConcurrentTest(INVOCATIONS, () -> {
            CookieRecorder socket = new CookieRecorder();
            ZeroCopyLoan loan = new ZeroCopyLoan();
            loan.set(ByteBuffer.allocateDirect(8), 7, socket);
            assertTrue(loan.borrow());                // the transport's write queued behind others
            ConcurrentRun.all(loan::giveBack, () -> {
                if (loan.completeUnlessLent()) {
                    socket.zeroCopyCompleted(7);
                }
                if (!loan.isLent()) {
                    loan.set(ByteBuffer.allocateDirect(8), 8, socket);   // the socket's next zero-copy send
                }
            });
            assertEquals(List.of(7), socket.reported());
        });
    }
}
