package org.rds4j.core.stack;

import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.junit.jupiter.api.Test;

/**
 * The bind table's pages of ports ({@link AddressPorts}), model-checked by Lincheck: binds, the stack's reservations
 * and unbinds under one monitor, as {@link BindTable} makes them, against lookups without it, as I/O threads make
 * them for every message, must be linearizable to {@link Model}, a plain array of owners, in every interleaving
 * explored. Two ports on two pages: a lookup may race the page's making. A lookup never sees a port unbound while a
 * socket takes it over from a reservation, nor a page lose a port bound on it.
 */
@Param(name = "port", gen = IntGen.class, conf = "0:1")
@Param(name = "socket", gen = IntGen.class, conf = "1:2")
public class AddressPortsLincheckTest {
    private static final int[] PORTS = {5, 300};
    private static final Object[] OWNERS = {BindTable.RESERVED, "socket 1", "socket 2"};

    private final AddressPorts ports = new AddressPorts();
    private final Object table = new Object();                 // BindTable's monitor

    /** The stack reserves a port for its pings. */
    @Operation
    public boolean reserve(@Param(name = "port") int p) {
        synchronized (table) {
            return ports.putIfAbsent(PORTS[p], BindTable.RESERVED);
        }
    }

    /** A socket binds a port by number: a reservation yields to it, as in {@link BindTable#bind}. */
    @Operation
    public boolean bind(@Param(name = "port") int p, @Param(name = "socket") int s) {
        synchronized (table) {
            return ports.putIfAbsent(PORTS[p], OWNERS[s]) || ports.replace(PORTS[p], BindTable.RESERVED, OWNERS[s]);
        }
    }

    @Operation
    public boolean unbind(@Param(name = "port") int p, @Param(name = "socket") int s) {
        synchronized (table) {
            return ports.remove(PORTS[p], OWNERS[s]);
        }
    }

    /** An I/O thread's lookup: the owner's index, -1 for none. */
    @Operation
    public int lookup(@Param(name = "port") int p) {
        Object o = ports.get(PORTS[p]);
        for (int i = 0; i < OWNERS.length; i++) {
            if (OWNERS[i] == o) {
                return i;
            }
        }
        return -1;
    }

    @Test
    void bindsAndLookupsAreLinearizable() {
        new ModelCheckingOptions()
                .threads(3)
                .actorsPerThread(2)
                .actorsAfter(1)
                .iterations(10)
                .invocationsPerIteration(100)
                .sequentialSpecification(Model.class)
                .check(getClass());
    }

    /** Two ports' owners, with one thread. */
    public static final class Model {
        private final int[] owner = {-1, -1};

        public boolean reserve(int p) {
            if (owner[p] != -1) {
                return false;
            }
            owner[p] = 0;
            return true;
        }

        public boolean bind(int p, int s) {
            if (owner[p] != -1 && owner[p] != 0) {
                return false;
            }
            owner[p] = s;
            return true;
        }

        public boolean unbind(int p, int s) {
            if (owner[p] != s) {
                return false;
            }
            owner[p] = -1;
            return true;
        }

        public int lookup(int p) {
            return owner[p];
        }
    }
}
