package org.rds4j.core.path;

import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.junit.jupiter.api.Test;
import org.rds4j.core.stack.RdsCounters;

/**
 * The send inbox ({@link SendQueue#push}, a Treiber stack that application threads push to, and
 * {@link SendQueue#takeInbox}, which the path takes whole and numbers), model-checked by Lincheck: every interleaving
 * of up to three threads' pushes and takes, explored at the level of each shared read and write, must be
 * linearizable to {@link Model}, a plain first-in first-out list numbered from 1. A take is the path's, of which there
 * is one at a time, so takes never run in parallel with each other ({@code nonParallelGroup}).
 */
@Param(name = "id", gen = IntGen.class, conf = "1:9")
public class SendQueueInboxLincheckTest {
    private final SendQueue queue = new SendQueue(InetAddress.getLoopbackAddress(), new RdsCounters());
    /** The newest message a take has seen: the next take reports what comes after it. */
    private OutgoingMessage seen;

    @Operation
    public void push(@Param(name = "id") int id) {
        queue.push(new OutgoingMessage(0, id, ByteBuffer.allocate(0), null, null, false));
    }

    /** A message taken, as one number: its destination port (the pushing operation's id) and its sequence number. */
    static long entry(int id, long sequence) {
        return sequence * 100 + id;
    }

    /** Takes the inbox in; returns what it brought, oldest first, as {@link #entry}s. */
    @Operation(nonParallelGroup = "path")
    public List<Long> take() {
        queue.takeInbox();
        List<Long> taken = new ArrayList<>();
        for (OutgoingMessage m = seen == null ? queue.head() : seen.next; m != null; m = m.next) {
            taken.add(entry(m.destinationPort, m.sequence));
            seen = m;
        }
        return taken;
    }

    @Test
    void everyInterleavingIsAFifoNumberedInPushOrder() {
        new ModelCheckingOptions()
                .threads(3)
                .actorsPerThread(2)
                .iterations(5)
                .invocationsPerIteration(100)
                .sequentialSpecification(Model.class)
                .check(getClass());
    }

    /** What the inbox and the numbering promise, with no concurrency at all. */
    public static final class Model {
        private final List<Integer> pushed = new ArrayList<>();
        private long nextSeq = 1;

        public void push(int id) {
            pushed.add(id);
        }

        public List<Long> take() {
            List<Long> taken = new ArrayList<>();
            for (int id : pushed) {
                taken.add(entry(id, nextSeq++));
            }
            pushed.clear();
            return taken;
        }
    }
}
