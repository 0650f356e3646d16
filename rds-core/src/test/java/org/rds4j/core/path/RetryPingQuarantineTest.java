package org.rds4j.core.path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import org.junit.jupiter.api.Test;

/**
 * A retry ping (to a peer that answered none) goes from a quarantined port; when the peer turns out to have restarted,
 * learnt on the connection the retry went on, that port must stay quarantined: the new peer may answer the retry
 * late, and a fresh ping from the same port would take that answer for its own and release messages the peer had
 * not read. Found by AcknowledgementModelTest (seed -6016719646845216517, in a CI run).
 */
class RetryPingQuarantineTest {
    private final FakeEnvironment env = new FakeEnvironment(11);
    private final Acknowledgements acks = new Acknowledgements(env, PathHarness.SMALL, "test", false);

    @Test
    void aRetryOnTheCurrentConnectionKeepsItsPortQuarantinedWhenThePeerRestarted() {
        int slot = acks.slotForPing(10, false);
        acks.pingQueued(slot, 10);
        OutgoingMessage ping = OutgoingMessage.ackOnly();
        ping.ackPing = true;
        ping.sequence = 10;
        acks.wrote(ping);                              // the ping went out on the first connection
        acks.connectionReset();                        // unanswered: its port is quarantined
        assertEquals(slot, acks.slotForRetry(), "the peer answers no ping: ask again from the quarantined port");
        acks.retryQueued(slot);                        // the retry goes on the current connection
        acks.peerRestarted();                          // whose probe says the peer restarted
        int retryPort = acks.port(slot);
        for (int k = 1; k <= Acknowledgements.MAX_OUTSTANDING; k++) {  // as many pings as may be outstanding
            int next = acks.slotForPing(20 + k, false);
            assertNotEquals(-1, next);
            assertNotEquals(retryPort, acks.port(next), "ping " + k + " took the retry's port: a late answer to the"
                    + " retry would be taken for this ping's");
            acks.pingQueued(next, 20 + k);
        }
        assertEquals(Acknowledgements.LATE, acks.pongArrived(retryPort), "the retry's answer proves nothing");
    }
}
