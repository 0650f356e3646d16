package org.rds4j.core.path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Path 0's probe goes ahead of the data that waited for the connection, in order and in numbering. A kernel that
 * still knew the number of paths of our previous run answered such data on a path chosen among those, which a stack
 * with fewer paths never opens (6.12, the kernel suite's scenario 7b); with our probe read first, it knows better.
 */
class ProbeOrderTest {

    @Test
    void theProbeIsWrittenAndNumberedBeforeMessagesQueuedWhileConnecting() {
        KernelPeerHarness h = new KernelPeerHarness(1);
        h.send(3);                                   // the first send opens the connection
        h.connect();
        h.transmit(100);
        List<KernelPeerHarness.Frame> frames = new ArrayList<>(h.toPeer);
        assertEquals(4, frames.size(), "the probe and three messages: " + frames);
        KernelPeerHarness.Frame probe = frames.get(0);
        assertEquals(ConnectionPath.PROBE_PORT, probe.sport(), "the probe first: " + frames);
        assertEquals(0, probe.dport(), "a probe ping: " + frames);
        long previous = probe.seq();
        for (KernelPeerHarness.Frame f : frames.subList(1, frames.size())) {
            assertTrue(f.appId() > 0, "then the socket's messages: " + frames);
            assertTrue(f.seq() > previous, "numbers rise on the wire: " + frames);
            previous = f.seq();
        }
    }
}
