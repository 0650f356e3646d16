package org.rds4j.bench.contenders;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.rds4j.bench.Link;
import org.rds4j.bench.Payload;

/**
 * The multipath contenders' ports and their end-of-cell check: the ports spread over every lane, and a link whose
 * messages all went over one path fails the check while it claims eight lanes. (That the eight-path contender passes
 * the check, with its ports on eight real paths, is part of BenchQuickTest's quick run of every contender.)
 */
class LanesTest {
    private static final int MESSAGES_PER_PAIR = 20;

    @Test
    void candidatePortsFallOnTheirLaneAndTheFirstOnesSpreadOverAllEight() {
        Set<Integer> firstPorts = new HashSet<>();
        for (int lane = 0; lane < 8; lane++) {
            int[] ports = Lanes.candidates(lane, 8, Lanes.FIRST_PORT);
            assertTrue(ports.length > 50, "lane " + lane + " has only " + ports.length + " candidate ports");
            for (int port : ports) {
                assertEquals(lane, Lanes.laneOf(port, 8), "port " + port);
                assertTrue(port >= Lanes.FIRST_PORT && port <= 0xffff, "port " + port);
            }
            firstPorts.add(ports[0]);
            assertEquals(0, Lanes.laneOf(ports[0], 1), "one lane: every port on lane 0");
        }
        assertEquals(8, firstPorts.size());
    }

    @Test
    void oneSharedPathPassesWhenOnePathIsClaimed() throws Exception {
        try (Link link = new Rds4jContender("tcp", "one-path", b -> b.paths(1), 8, 1, "").open(64)) {
            exchange(link);
            link.verify();
        }
    }

    @Test
    void allTrafficOverOnePathFailsWhenEightLanesAreClaimed() throws Exception {
        // The stacks offer one path, the check expects eight: everything went over path 0.
        try (Link link = new Rds4jContender("tcp", "claims-eight", b -> b.paths(1), 8, 8, "").open(64)) {
            exchange(link);
            IOException e = assertThrows(IOException.class, link::verify);
            assertTrue(e.getMessage().contains("did not go over the 8 lane(s)"), e.getMessage());
            assertTrue(e.getMessage().contains("path 1 numbered 0 messages, its sockets sent " + MESSAGES_PER_PAIR),
                    e.getMessage());
        }
    }

    @Test
    void aSinglePairBindsOnePortOnLaneZeroOnBothStacks() throws Exception {
        for (String transport : new String[] {"tcp", "loopback"}) {
            try (Link link = new Rds4jContender(transport).open(64)) {
                int portA = ((Rds4jEndpoint) link.a()).localPort();
                int portB = ((Rds4jEndpoint) link.b()).localPort();
                assertEquals(portA, portB, transport + ": a request and its reply take one lane");
                assertEquals(0, Lanes.laneOf(portA, 8), transport + ": port " + portA);
                exchange(link);
                link.verify();
            }
        }
    }

    /** Every pair sends {@link #MESSAGES_PER_PAIR} messages each way, each received and checked. */
    private static void exchange(Link link) throws IOException {
        ByteBuffer message = Payload.newMessage(64);
        ByteBuffer received = ByteBuffer.allocateDirect(64);
        for (int p = 0; p < link.pairs(); p++) {
            for (int i = 0; i < MESSAGES_PER_PAIR; i++) {
                Payload.stamp(message, i);
                link.a(p).send(message);
                Payload.check(received, link.b(p).receive(received), 64, i);
                Payload.stamp(message, i);
                link.b(p).send(message);
                Payload.check(received, link.a(p).receive(received), 64, i);
            }
        }
    }
}
