package org.rds4j.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class CounterDeltasTest {

    @Test
    void betweenKeepsWhatMovedTheMostFirst() {
        Map<String, Long> before = Map.of("send_queued", 100L, "ack_received", 7L, "conn_reset", 2L);
        Map<String, Long> after = Map.of("send_queued", 1_100L, "ack_received", 9L, "conn_reset", 2L,
                "caller_passes", 9L);
        // A counter the first snapshot lacks counts from 0; one that did not move is left out; equal moves by name.
        assertEquals(List.of(new CounterDeltas.Delta(true, "send_queued", 1_000),
                new CounterDeltas.Delta(true, "caller_passes", 9),
                new CounterDeltas.Delta(true, "ack_received", 2)), CounterDeltas.between(true, before, after));
        assertEquals(List.of(), CounterDeltas.between(false, after, after));
    }

    @Test
    void describeListsSideAFirstWithCountsPerMessage() {
        List<String> lines = CounterDeltas.describe(List.of(
                new CounterDeltas.Delta(false, "recv_delivered", 2_000),
                new CounterDeltas.Delta(true, "send_queued", 2_000),
                new CounterDeltas.Delta(true, "send_queue_full", 3)), 2_000);
        assertEquals(List.of(
                "  counters that moved in the throughput phase (side a sends, side b receives): count, per message",
                "    a send_queued                             2,000       1.0000",
                "    a send_queue_full                             3       0.0015",
                "    b recv_delivered                          2,000       1.0000"), lines);
        assertEquals(List.of(), CounterDeltas.describe(List.of(), 2_000));
    }
}
