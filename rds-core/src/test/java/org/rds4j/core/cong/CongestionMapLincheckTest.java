package org.rds4j.core.cong;

import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.junit.jupiter.api.Test;

/**
 * {@link CongestionMap}'s bits: ports marked and cleared under the map's monitor by readers crossing their marks and
 * by arriving maps, read without it by senders ({@link CongestionMap#isCongested}), model-checked by Lincheck: every
 * interleaving of three threads' operations, explored at each shared read and write and monitor, must be
 * linearizable to {@link Model}, a plain set of ports. Ports 0 to 11 span two bytes, so threads meet on one byte's
 * bits: a change to one port must never undo another's.
 */
@Param(name = "port", gen = IntGen.class, conf = "0:11")
public class CongestionMapLincheckTest {
    private final CongestionMap map = new CongestionMap();

    @Operation
    public boolean set(@Param(name = "port") int port) {
        return map.set(port);
    }

    @Operation
    public boolean clear(@Param(name = "port") int port) {
        return map.clear(port);
    }

    @Operation
    public boolean isCongested(@Param(name = "port") int port) {
        return map.isCongested(port);
    }

    @Test
    void changesToOnePortNeverUndoAnothers() {
        new ModelCheckingOptions()
                .threads(3)
                .actorsPerThread(3)
                .iterations(10)
                .invocationsPerIteration(100)
                .sequentialSpecification(Model.class)
                .check(getClass());
    }

    /** A set of congested ports, with nobody else about. */
    public static final class Model {
        private final boolean[] congested = new boolean[12];

        public boolean set(int port) {
            boolean changed = !congested[port];
            congested[port] = true;
            return changed;
        }

        public boolean clear(int port) {
            boolean changed = congested[port];
            congested[port] = false;
            return changed;
        }

        public boolean isCongested(int port) {
            return congested[port];
        }
    }
}
