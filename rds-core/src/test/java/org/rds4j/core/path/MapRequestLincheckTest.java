package org.rds4j.core.path;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import org.jetbrains.lincheck.Lincheck;
import org.junit.jupiter.api.Test;
import org.rds4j.core.cong.CongestionMap;
import org.rds4j.core.util.ConcurrentRun;

/**
 * A path's request to send our congestion map ({@link MapRequest}, {@code PathTransmitter}'s), model-checked by
 * Lincheck at every shared read and write and the map's monitor: two readers each mark a port congested and raise the
 * request, while the path's owner takes the request and copies the map twice, as its passes do. In every interleaving
 * no change is lost: the last copy sent holds both ports, or the request is still raised for the next pass.
 */
class MapRequestLincheckTest {
    private static final int INVOCATIONS = 100;
    private static final int[] PORTS = {1, 2};

    @Test
    void everyChangeIsSentOrStillRequested() {
        Lincheck.runConcurrentTest(INVOCATIONS, () -> {
            CongestionMap map = new CongestionMap();
            MapRequest request = new MapRequest();
            CongestionMap sent = new CongestionMap();          // what the peer has: the last copy
            byte[] copy = new byte[CongestionMap.BYTES];
            Runnable[] threads = new Runnable[PORTS.length + 1];
            for (int i = 0; i < PORTS.length; i++) {
                int port = PORTS[i];
                threads[i] = () -> {
                    map.set(port);
                    request.raise();
                };
            }
            threads[PORTS.length] = () -> {                     // the owner's passes
                for (int pass = 0; pass < 2; pass++) {
                    if (request.take()) {
                        map.copyTo(copy);
                        sent.replace(ByteBuffer.wrap(copy));
                    }
                }
            };
            ConcurrentRun.all(threads);
            if (!request.raised()) {
                for (int port : PORTS) {
                    assertTrue(sent.isCongested(port), "a change to port " + port + " neither sent nor requested");
                }
            }
        });
    }
}
