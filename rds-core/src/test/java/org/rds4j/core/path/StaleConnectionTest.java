package org.rds4j.core.path;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import net.jqwik.api.Example;
import org.rds4j.core.cong.CongestionMap;
import org.rds4j.core.wire.RdsHeader;

/**
 * Bytes that a replaced connection still hands over count for nothing: the path's numbers follow its new connection.
 * Taking a late frame would move the next expected number past messages the new connection resends, and the
 * duplicate rule would then drop one of them: a message lost (seen once in the loopback transport's multipath test).
 */
class StaleConnectionTest {
    private final FakeEnvironment env = new FakeEnvironment(3);
    private final FakeTransport transport = new FakeTransport(env.scheduler);

    @Example
    void aFrameFromAReplacedConnectionDoesNotMoveTheNextExpectedNumber() throws IOException {
        Connection connection = new Connection(InetAddress.getByName("10.0.0.1"), InetAddress.getByName("10.0.0.2"),
                "fake", transport, env, new CongestionMap());
        ConnectionPath path = connection.path(0);
        path.connectIfDown();
        FakeTransport.FakeConnection first = transport.connected(transport.pendingAttempts().get(0));
        deliver(first, 5, 0);
        assertEquals(6, path.receiver().nextRxSeq());

        first.handler.onClosed(new IOException("connection reset (test)"));
        env.scheduler.advanceBy(0);                        // the first reconnect is immediate
        FakeTransport.FakeConnection second = transport.connected(transport.pendingAttempts().get(0));

        deliver(first, 9, 0);                              // late bytes of the replaced connection
        assertEquals(6, path.receiver().nextRxSeq(), "a frame from the replaced connection is ignored");
        deliver(second, 7, RdsHeader.FLAG_RETRANSMITTED);  // the peer resends on the new one
        assertEquals(8, path.receiver().nextRxSeq(), "the resent message is taken");
    }

    /** A zero-length message from port 4000 to port 4001 (no socket there: only the numbers matter). */
    private static void deliver(FakeTransport.FakeConnection c, long seq, int flags) {
        ByteBuffer b = ByteBuffer.allocate(RdsHeader.SIZE);
        new RdsHeader().sequence(seq).sourcePort(4000).destinationPort(4001).flags(flags).encode(b);
        c.handler.onBytes(b.flip());
    }
}
