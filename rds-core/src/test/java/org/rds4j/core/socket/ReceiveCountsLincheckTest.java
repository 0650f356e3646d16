package org.rds4j.core.socket;

import java.util.concurrent.locks.ReentrantLock;
import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.junit.jupiter.api.Test;
import org.rds4j.core.stack.RdsCounters;
import org.rds4j.core.stack.RdsCounters.Counter;

/**
 * Two sockets' {@link ReceiveCounts}, model-checked by Lincheck: readers take messages (under each socket's own lock,
 * as {@link ReceiveQueue} counts), sockets close (folding their share into the stack's counters) and inspection reads
 * the stack's {@code recv_delivered}, all at once. Every read must be linearizable to {@link Model}, a plain total: no
 * read sees a closing socket's share twice or not at all, and no take is lost, before or after its socket's close.
 * ({@code recv_bytes_freed_fromsock} takes the same way; the two counters are separate objects to a reader, as they
 * were with an atomic add each, so one counter is checked.)
 */
@Param(name = "socket", gen = IntGen.class, conf = "0:1")
@Param(name = "length", gen = IntGen.class, conf = "1:3")
public class ReceiveCountsLincheckTest {
    private final RdsCounters counters = new RdsCounters();
    private final ReentrantLock[] locks = {new ReentrantLock(), new ReentrantLock()};
    private final ReceiveCounts[] sockets = {new ReceiveCounts(counters), new ReceiveCounts(counters)};

    @Operation
    public void take(@Param(name = "socket") int s, @Param(name = "length") int length) {
        locks[s].lock();
        try {
            sockets[s].taken(length);
        } finally {
            locks[s].unlock();
        }
    }

    @Operation
    public void close(@Param(name = "socket") int s) {
        locks[s].lock();
        try {
            sockets[s].fold();
        } finally {
            locks[s].unlock();
        }
    }

    @Operation
    public long delivered() {
        return counters.get(Counter.RECV_DELIVERED);
    }

    @Test
    void readsAreLinearizable() {
        new ModelCheckingOptions()
                .threads(2)
                .actorsPerThread(3)
                .iterations(30)
                .invocationsPerIteration(300)
                .sequentialSpecification(Model.class)
                .check(getClass());
    }

    /** The total, with one thread: a close changes nothing a read can see. */
    public static final class Model {
        private long delivered;

        public void take(int s, int length) {
            delivered++;
        }

        public void close(int s) {
        }

        public long delivered() {
            return delivered;
        }

    }
}
