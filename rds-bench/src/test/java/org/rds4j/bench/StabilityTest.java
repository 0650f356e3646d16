package org.rds4j.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The stability lines: rds4j's 64 B spreads against the stability bound, next to raw NIO's in the same runs. */
class StabilityTest {

    private static Row row(String contender, int size, double msgsSpread, double p50Spread) {
        return new Row(contender, size, null, 1e6, 64, 30, 60, 90, 0, 0.3, msgsSpread, p50Spread, 4.0, 5);
    }

    @Test
    void eachRds4jLineNamesRawNiosSpreadInTheSameRuns() {
        List<String> lines = Bench.stability(List.of(row("nio-packed", 64, 49.9, 24.5), row("nio-per-msg", 64, 15.2,
                20.6), row("rds4j-tcp", 64, 12.0, 9.0), row("rds4j-loopback", 64, 71.7, 36.2),
                row("rds4j-tcp", 8192, 80, 80)));
        assertEquals(List.of(
                "stability rds4j-tcp 64 B over 5 runs: msgs/s +-12.0 %, RTT p50 +-9.0 %: within +-15 % (raw NIO in the "
                        + "same runs: nio-packed msgs/s +-49.9 %, nio-per-msg RTT p50 +-20.6 %); msgs/s spread -37.9 "
                        + "points against nio-packed's",
                "stability rds4j-loopback 64 B over 5 runs: msgs/s +-71.7 %, RTT p50 +-36.2 %: NOT within +-15 % (raw "
                        + "NIO in the same runs: nio-packed msgs/s +-49.9 %, nio-per-msg RTT p50 +-20.6 %); msgs/s "
                        + "spread +21.8 points against nio-packed's"), lines);
    }

    @Test
    void aReferenceThatDidNotRunIsLeftOut() {
        assertEquals(List.of("stability rds4j-tcp 64 B over 5 runs: msgs/s +-5.7 %, RTT p50 +-1.6 %: within +-15 % "
                        + "(raw NIO in the same runs: nio-packed msgs/s +-8.2 %); msgs/s spread -2.5 points against "
                        + "nio-packed's"),
                Bench.stability(List.of(row("nio-packed", 64, 8.2, 2.1), row("rds4j-tcp", 64, 5.7, 1.6))));
    }

    @Test
    void withoutRawNioTheLineSaysNothingOfIt() {
        assertEquals(List.of("stability rds4j-tcp 64 B over 5 runs: msgs/s +-16.0 %, RTT p50 +-9.0 %: NOT within +-15 %"),
                Bench.stability(List.of(row("rds4j-tcp", 64, 16.0, 9.0))));
    }
}
