package org.rds4j.core.socket;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.jetbrains.lincheck.Lincheck;
import org.junit.jupiter.api.Test;
import org.rds4j.core.path.InboxTarget;
import org.rds4j.core.path.MessagePool;
import org.rds4j.core.path.OutgoingMessage;
import org.rds4j.core.stack.RdsCounters;
import org.rds4j.core.util.ConcurrentRun;

/**
 * A socket's open run ({@link SendCoalescer}'s {@code open}), model-checked by Lincheck with the real pieces around it:
 * two threads send on one socket (each small send tries the appender's try-lock and falls back to the ordinary way,
 * as {@code CoreSocket.send} does), while the path takes the real inbox in, sealing runs and numbering messages. In
 * every interleaving explored, every message is taken once, and one thread's small send after its own ordinary send
 * comes after it on the wire: it never joins a run queued before that send.
 */
class SendCoalescerLincheckTest {
    private static final int INVOCATIONS = 500;
    private static final int SOURCE_PORT = 4000;
    private static final int DESTINATION_PORT = 5000;
    /** Past what a run may carry: goes the ordinary way. */
    private static final int ORDINARY = OutgoingMessage.RUN_ENTRY_MAX + 1;

    @Test
    void aSmallSendNeverOvertakesTheSameThreadsOrdinarySend() {
        Lincheck.runConcurrentTest(INVOCATIONS, () -> {
            Socket socket = new Socket();
            List<Integer> taken = new ArrayList<>();              // the path's alone
            ConcurrentRun.all(
                    () -> {
                        socket.send(1);
                        socket.send(ORDINARY);
                        socket.send(2);
                    },
                    () -> socket.send(3),
                    () -> taken.addAll(socket.target.take()));     // the path, taking in what is there so far
            taken.addAll(socket.target.take());
            assertEquals(List.of(1, 2, 3, ORDINARY), taken.stream().sorted().toList(), "each message once: " + taken);
            assertTrue(taken.indexOf(1) < taken.indexOf(ORDINARY), "the first small send first: " + taken);
            assertTrue(taken.indexOf(ORDINARY) < taken.indexOf(2),
                    "the small send after the ordinary one after it: " + taken);
        });
    }

    /** One socket's send side: its coalescer, budget and message pool, and the path its messages go to. */
    private static final class Socket {
        final SendCoalescer coalescer = new SendCoalescer();
        final SendBuffer budget = new SendBuffer(new RdsCounters(), 1 << 20);
        final MessagePool pool = new MessagePool();
        final InboxTarget target = new InboxTarget();

        /** A message of {@code length} bytes, the way {@code CoreSocket.send} queues one. */
        void send(int length) {
            ByteBuffer payload = ByteBuffer.allocate(length);
            if (coalescer.trySend(payload, target, SOURCE_PORT, DESTINATION_PORT, budget, pool, null)) {
                return;
            }
            OutgoingMessage m = pool.take();
            m.fill(SOURCE_PORT, DESTINATION_PORT, payload, null);
            try {
                m.askForAck(budget.reserve(length, true, 0, () -> { }));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            coalescer.sendOrdinary(target, SOURCE_PORT, m);
        }
    }
}
