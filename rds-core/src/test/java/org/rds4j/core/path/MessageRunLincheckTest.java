package org.rds4j.core.path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import org.jetbrains.lincheck.Lincheck;
import org.junit.jupiter.api.Test;
import org.rds4j.core.util.ConcurrentRun;

/**
 * A run's slot reservation against its seal ({@link MessageRun}), model-checked by Lincheck: a sender appends while
 * the path seals, interleaved at every shared read and write. In every interleaving the appends that succeeded are
 * exactly the messages the seal counted, none after a refusal, and the sealed run holds each one's length and bytes:
 * so a message is either numbered with the run or its sender knows to queue it otherwise.
 */
class MessageRunLincheckTest {
    private static final int INVOCATIONS = 150;
    private static final int APPENDS = 2;

    @Test
    void theSealCountsExactlyTheAppendsThatSucceeded() {
        Lincheck.runConcurrentTest(INVOCATIONS, () -> {
            MessageRun run = new MessageRun();
            ByteBuffer buffer = ByteBuffer.allocate(16);
            buffer.put(0, (byte) 1);
            run.start(buffer, 1);
            int[] results = new int[APPENDS];
            int[] sealed = new int[1];
            long[] sealedBytes = new long[1];
            ConcurrentRun.all(
                    () -> {
                        for (int i = 0; i < APPENDS; i++) {
                            byte b = (byte) (i + 2);
                            results[i] = run.append(buffer, ByteBuffer.wrap(new byte[] {b, b}), false);
                        }
                    },
                    () -> {
                        sealed[0] = run.seal();
                        sealedBytes[0] = run.bytes();
                    });
            int appended = 0;
            for (int i = 0; i < APPENDS; i++) {
                if (results[i] == MessageRun.APPENDED) {
                    assertEquals(i, appended, "an append succeeded after one was refused");
                    appended++;
                } else {
                    assertEquals(MessageRun.TAKEN, results[i], "append " + i);
                }
            }
            assertEquals(1 + appended, sealed[0], "messages the seal counted");
            assertEquals(1 + 2L * appended, sealedBytes[0], "bytes the seal counted");
            assertEquals(sealed[0], run.count());
            assertEquals(1, run.length(0));
            assertEquals(1, buffer.get(0));
            for (int i = 1; i < sealed[0]; i++) {
                assertEquals(2, run.length(i), "length of message " + i);
                assertEquals(i + 1, buffer.get(1 + 2 * (i - 1)), "first byte of message " + i);
                assertEquals(i + 1, buffer.get(2 + 2 * (i - 1)), "second byte of message " + i);
            }
            assertTrue(run.append(buffer, ByteBuffer.wrap(new byte[] {9}), false) == MessageRun.TAKEN,
                    "an append after the seal must be refused");
        });
    }
}
