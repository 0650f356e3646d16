package org.rds4j.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.util.List;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;

/** Frames of random sizes, cut into random transmit calls, arrive byte-exact over a real TCP connection. */
class TransmitSplitPropertiesTest {
    private static Stacks stacks;

    @BeforeContainer
    static void start() throws Exception {
        stacks = new Stacks();
    }

    @AfterContainer
    static void stop() {
        stacks.close();
        LeakRecorder.assertNoLeaks();
    }

    @Property(tries = 40)
    void framesArriveByteExactWhateverTheSplit(
            @ForAll @Size(min = 1, max = 60) List<@IntRange(min = 0, max = 150_000) Integer> sizes,
            @ForAll @Size(min = 1, max = 20) List<@IntRange(min = 1, max = 8) Integer> splits) throws Exception {
        RecordingHandler[] p = stacks.connect();
        RecordingHandler client = p[0];
        RecordingHandler server = p[1];
        try {
            for (int i = 0; i < 200; i++) {
                client.framesPerCall.add(splits.get(i % splits.size()));
            }
            ByteArrayOutputStream expected = new ByteArrayOutputStream();
            for (int i = 0; i < sizes.size(); i++) {
                ByteBuffer[] f = RecordingHandler.frame(i + 1, RecordingHandler.payload(i * 31L + sizes.get(i),
                        sizes.get(i)), i + sizes.get(i));
                RecordingHandler.append(expected, f);
                client.outbox.add(f);
            }
            client.connection.requestTransmit();
            byte[] want = expected.toByteArray();
            assertEquals(want.length, server.awaitReceived(want.length, Stacks.WAIT));
            assertEquals(want.length, client.awaitTransmitted(want.length, Stacks.WAIT));
            assertArrayEquals(want, server.received());
            assertEquals(sizes.size(), RecordingHandler.decode(server.received()).size());
            assertTrue(client.violations.isEmpty(), client.violations::toString);
            assertTrue(server.violations.isEmpty(), server.violations::toString);
        } finally {
            client.connection.close();
            client.closed.get(20, java.util.concurrent.TimeUnit.SECONDS);
            server.closed.get(20, java.util.concurrent.TimeUnit.SECONDS);
        }
    }
}
