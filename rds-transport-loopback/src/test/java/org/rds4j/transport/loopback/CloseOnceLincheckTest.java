package org.rds4j.transport.loopback;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.jetbrains.lincheck.Lincheck;
import org.junit.jupiter.api.Test;

/**
 * A loopback endpoint's close and its report ({@link CloseOnce}), model-checked by Lincheck at every shared read,
 * write and compare-and-set: two threads close the endpoint with causes of their own (a local close and the peer's
 * reset) and each winner reports, while the endpoint's thread sets the handler and reports if it finds the endpoint
 * closed, as {@code LoopbackEndpoint.handler} does. In every interleaving exactly one close wins, the handler hears of
 * the close exactly once, and with the winner's cause.
 */
class CloseOnceLincheckTest {
    private static final int INVOCATIONS = 200;

    @Test
    void oneCloseWinsAndIsReportedOnceWithItsCause() {
        Lincheck.runConcurrentTest(INVOCATIONS, () -> {
            CloseOnce close = new CloseOnce();
            Throwable local = new Throwable("local");
            Throwable reset = new Throwable("reset");
            AtomicInteger winners = new AtomicInteger();
            AtomicReference<Throwable> winner = new AtomicReference<>();
            AtomicInteger reports = new AtomicInteger();
            AtomicReference<Throwable> reported = new AtomicReference<>();
            Runnable report = () -> {
                if (close.claimReport()) {
                    reports.incrementAndGet();
                    reported.set(close.cause());
                }
            };
            Thread[] closers = new Thread[2];
            Throwable[] causes = {local, reset};
            for (int i = 0; i < closers.length; i++) {
                Throwable cause = causes[i];
                closers[i] = new Thread(() -> {
                    if (close.close(cause)) {
                        winners.incrementAndGet();
                        winner.set(cause);
                        report.run();
                    }
                });
                closers[i].start();
            }
            Thread owner = new Thread(() -> {
                if (close.isClosed()) {
                    report.run();
                }
            });
            owner.start();
            try {
                for (Thread t : closers) {
                    t.join();
                }
                owner.join();
            } catch (InterruptedException e) {
                throw new AssertionError("nobody interrupts these threads", e);
            }
            assertEquals(1, winners.get(), "closes that won");
            assertEquals(1, reports.get(), "reports of the close");
            assertSame(winner.get(), reported.get(), "the cause reported is not the winning close's");
        });
    }
}
