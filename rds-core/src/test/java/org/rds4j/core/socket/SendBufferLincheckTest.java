package org.rds4j.core.socket;

import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.ThreadIdGen;
import org.junit.jupiter.api.Test;
import org.rds4j.core.stack.RdsCounters;

/**
 * A send budget's word of bytes and messages ({@link SendBuffer#tryReserve}, {@link SendBuffer#release}),
 * model-checked by Lincheck: senders reserving and the I/O thread releasing must be linearizable to {@link Model}, two
 * plain counts with the same rule (a message fits while fewer bytes than the budget are queued; it asks for a prompt
 * acknowledgement when half the budget was in use), in every interleaving explored. Each thread releases only what it
 * reserved itself, as acknowledgements release only what was queued.
 */
@Param(name = "len", gen = IntGen.class, conf = "0:3")
public class SendBufferLincheckTest {
    static final long BUDGET = 4;
    private static final int MAX_THREADS = 8;

    private final SendBuffer buffer = new SendBuffer(new RdsCounters(), BUDGET);
    private final Held held = new Held();

    /** What each thread reserved and has not released: each thread reads and writes only its own slot. */
    static final class Held {
        final long[] bytes = new long[MAX_THREADS];
        final int[] messages = new int[MAX_THREADS];
    }

    /** A sender: reserves room for {@code len} bytes; -1 if there is none, else whether it would ask for an ack. */
    @Operation
    public int reserve(@Param(gen = ThreadIdGen.class) int thread, @Param(name = "len") int len) {
        int r = buffer.tryReserve(len);
        if (r >= 0) {
            held.bytes[thread] += len;
            held.messages[thread]++;
        }
        return r;
    }

    /** The peer acknowledged what this thread reserved: it is released in one batch. */
    @Operation
    public void releaseMine(@Param(gen = ThreadIdGen.class) int thread) {
        buffer.release(held.messages[thread], held.bytes[thread]);
        held.bytes[thread] = 0;
        held.messages[thread] = 0;
    }

    @Operation
    public long queuedBytes() {
        return buffer.queuedBytes();
    }

    @Operation
    public long queuedMessages() {
        return buffer.queuedMessages();
    }

    @Test
    void reserveAndReleaseAreLinearizable() {
        new ModelCheckingOptions()
                .threads(3)
                .actorsPerThread(2)
                .actorsAfter(2)
                .iterations(10)
                .invocationsPerIteration(100)
                .sequentialSpecification(Model.class)
                .check(getClass());
    }

    /** The budget's rule with one thread: two counts, and what each thread holds. */
    public static final class Model {
        private long bytes;
        private long messages;
        private final Held held = new Held();

        public int reserve(int thread, int len) {
            if (bytes >= BUDGET) {
                return -1;
            }
            int ask = bytes >= BUDGET / 2 ? 1 : 0;
            bytes += len;
            messages++;
            held.bytes[thread] += len;
            held.messages[thread]++;
            return ask;
        }

        public void releaseMine(int thread) {
            bytes -= held.bytes[thread];
            messages -= held.messages[thread];
            held.bytes[thread] = 0;
            held.messages[thread] = 0;
        }

        public long queuedBytes() {
            return bytes;
        }

        public long queuedMessages() {
            return messages;
        }
    }
}
