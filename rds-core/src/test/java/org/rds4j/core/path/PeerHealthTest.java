package org.rds4j.core.path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.Example;
import org.rds4j.RdsDatagram;
import org.rds4j.RdsPeerState;
import org.rds4j.core.cong.CongestionMap;
import org.rds4j.core.spi.ConnectResetException;
import org.rds4j.core.spi.PeerRefusedException;
import org.rds4j.core.stack.RdsCounters.Counter;
import org.rds4j.core.wire.RdsHeader;

/**
 * What path 0's attempts make of a peer (PeerHealth), in virtual time: connections ended before the peer's first byte
 * are a refusal from a peer not heard since it was away, and nothing but noise from one that talked to us (a kernel
 * tearing down a lost path resets what it accepts for a while); TLS failures are refusals either way; attempts that
 * make no connection make the peer unreachable; a byte makes it up again. The queued message fails once, with the
 * cause in words.
 */
class PeerHealthTest {
    private final FakeEnvironment env = new FakeEnvironment(7);
    private final FakeTransport transport = new FakeTransport(env.scheduler);
    private final Failures owner = new Failures();
    private final Connection connection;

    PeerHealthTest() throws IOException {
        env.peerFailureThreshold = 3;
        connection = new Connection(InetAddress.getByName("10.0.0.1"), InetAddress.getByName("10.0.0.2"), "fake",
                transport, env, new CongestionMap());
    }

    @Example
    void resetsFromAPeerNeverHeardAreARefusalUntilItSpeaks() {
        queueOne();
        resetBeforeAnyByte(2);
        assertNull(connection.refusal(), "two resets are under the threshold");
        assertEquals(List.of(), env.peerStates);
        resetBeforeAnyByte(1);
        assertEquals(RdsDatagram.Failure.REFUSED, connection.refusal());
        assertTrue(connection.refusalReason().contains("add 10.0.0.1 to that stack's allowPeers"),
                connection.refusalReason());
        assertEquals(List.of(RdsPeerState.REFUSED), env.peerStates);
        assertEquals(List.of(RdsDatagram.Failure.REFUSED), owner.reasons, "the queued message failed, once");
        assertTrue(owner.why.get(0).contains("ended 3 connections in a row"), owner.why.get(0));
        assertEquals(3, env.counters.get(Counter.CONN_REFUSED_BY_PEER));

        resetBeforeAnyByte(2);
        assertEquals(List.of(RdsPeerState.REFUSED), env.peerStates, "reported once");
        speak(nextConnection());
        assertNull(connection.refusal(), "a byte from the peer ends the refusal");
        assertEquals(List.of(RdsPeerState.REFUSED, RdsPeerState.UP), env.peerStates);
    }

    @Example
    void aPeerThatTalkedIsNotTakenForRefusingUntilItWasAway() {
        FakeTransport.FakeConnection first = nextConnection();
        speak(first);
        first.handler.onClosed(new IOException("connection reset (test)"));
        resetBeforeAnyByte(10);
        assertNull(connection.refusal(), "resets from a peer that talked are no refusal");
        assertEquals(0, env.counters.get(Counter.CONN_REFUSED_BY_PEER));
        assertEquals(List.of(RdsPeerState.UP), env.peerStates);

        queueOne();
        failToConnect(3);
        assertEquals(List.of(RdsPeerState.UP, RdsPeerState.UNREACHABLE), env.peerStates);
        assertEquals(List.of(), owner.reasons, "without unreachableTimeout, messages wait as in the kernel");
        assertEquals(3, env.counters.get(Counter.CONN_CONNECT_FAILED));

        resetBeforeAnyByte(3);                  // whatever listens there now has not talked to us
        assertEquals(RdsDatagram.Failure.REFUSED, connection.refusal());
        assertEquals(List.of(RdsPeerState.UP, RdsPeerState.UNREACHABLE, RdsPeerState.REFUSED), env.peerStates);
        assertEquals(List.of(RdsDatagram.Failure.REFUSED), owner.reasons);
    }

    @Example
    void failedHandshakesAreARefusalEvenFromAPeerThatTalked() {
        FakeTransport.FakeConnection first = nextConnection();
        speak(first);
        first.handler.onClosed(new IOException("connection reset (test)"));
        queueOne();
        for (int i = 0; i < 3; i++) {
            fail(attempt(), new PeerRefusedException("the TLS handshake failed: bad_certificate", true, null));
        }
        assertEquals(RdsDatagram.Failure.AUTHENTICATION_FAILED, connection.refusal());
        assertTrue(connection.refusalReason().contains("bad_certificate"), connection.refusalReason());
        assertEquals(List.of(RdsPeerState.UP, RdsPeerState.REFUSED), env.peerStates);
        assertEquals(List.of(RdsDatagram.Failure.AUTHENTICATION_FAILED), owner.reasons);
    }

    @Example
    void connectsResetBeforeTheyFinishAreARefusal() {
        queueOne();
        for (int i = 0; i < 3; i++) {
            fail(attempt(), new ConnectResetException("10.0.0.2:16385 reset the connection as it was made (test)",
                    new ConnectException("Connection reset by peer (test)")));
        }
        assertEquals(RdsDatagram.Failure.REFUSED, connection.refusal());
        assertEquals(List.of(RdsPeerState.REFUSED), env.peerStates);
        assertEquals(List.of(RdsDatagram.Failure.REFUSED), owner.reasons);
        assertEquals(3, env.counters.get(Counter.CONN_REFUSED_BY_PEER));
        assertEquals(0, env.counters.get(Counter.CONN_CONNECT_FAILED));
    }

    @Example
    void aPokeResetBeforeItFinishesIsNeitherARefusalNorUnreachable() throws IOException {
        // The larger address pokes; the smaller peer resets the poke and connects back (docs/protocol.md).
        Connection larger = new Connection(InetAddress.getByName("10.0.0.3"), InetAddress.getByName("10.0.0.1"),
                "fake", transport, env, new CongestionMap());
        OutgoingMessage m = new OutgoingMessage(4000, 4001, ByteBuffer.allocate(8), owner, null, false);
        larger.runOnOwner(() -> larger.path(0).enqueue(m));
        for (int i = 0; i < 5; i++) {
            fail(attempt(larger), new ConnectResetException("10.0.0.1:16385 reset the connection as it was made"
                    + " (test)", new ConnectException("Connection reset by peer (test)")));
        }
        assertNull(larger.refusal());
        assertEquals(List.of(), env.peerStates, "nothing to report: the peer answered every poke");
        assertEquals(List.of(), owner.reasons, "the message waits for the peer to connect back");
        assertEquals(0, env.counters.get(Counter.CONN_REFUSED_BY_PEER));
        assertEquals(0, env.counters.get(Counter.CONN_CONNECT_FAILED));
    }

    // ------------------------------------------------------------------------------------------------ helpers

    /** One message of {@link #owner} queued on path 0, which starts connecting. */
    private void queueOne() {
        OutgoingMessage m = new OutgoingMessage(4000, 4001, ByteBuffer.allocate(8), owner, null, false);
        connection.runOnOwner(() -> connection.path(0).enqueue(m));
    }

    /** The pending attempt of path 0 (connecting it if none is pending). */
    private FakeTransport.Attempt attempt() {
        return attempt(connection);
    }

    /** The pending attempt of {@code c}'s path 0 (connecting it if none is pending). */
    private FakeTransport.Attempt attempt(Connection c) {
        env.scheduler.advanceBy(FakeEnvironment.MAX_NANOS);    // a reconnect due, tasks handed to the owner
        if (transport.pendingAttempts().isEmpty()) {
            c.path(0).connectIfDown();
        }
        List<FakeTransport.Attempt> pending = transport.pendingAttempts();
        assertEquals(1, pending.size(), "one attempt of path 0 pending: " + pending);
        return pending.get(0);
    }

    private FakeTransport.FakeConnection nextConnection() {
        return transport.connected(attempt());
    }

    /** {@code n} attempts in a row that connect and are reset before the peer sends anything. */
    private void resetBeforeAnyByte(int n) {
        for (int i = 0; i < n; i++) {
            nextConnection().handler.onClosed(new IOException("connection reset by peer (test)"));
        }
    }

    /** {@code n} attempts in a row that make no connection. */
    private void failToConnect(int n) {
        for (int i = 0; i < n; i++) {
            fail(attempt(), new ConnectException("Connection refused (test)"));
        }
    }

    private static void fail(FakeTransport.Attempt a, IOException cause) {
        a.completed = true;
        a.handler.onConnectFailed(cause);
    }

    /** The peer sends a zero-length message (to a port where nothing is bound: only its arrival matters). */
    private static void speak(FakeTransport.FakeConnection c) {
        ByteBuffer b = ByteBuffer.allocate(RdsHeader.SIZE);
        new RdsHeader().sequence(0).sourcePort(4000).destinationPort(4001).encode(b);
        c.handler.onBytes(b.flip());
    }

    /** A socket that records why its messages failed. */
    private static final class Failures implements MessageOwner {
        final List<RdsDatagram.Failure> reasons = new ArrayList<>();
        final List<String> why = new ArrayList<>();

        @Override
        public boolean isClosed() {
            return false;
        }

        @Override
        public void released(OutgoingMessage first, OutgoingMessage last, int entries, int count, long bytes) {
            throw new AssertionError("nothing reaches a peer that never acknowledges here");
        }

        @Override
        public void failed(OutgoingMessage message, InetSocketAddress destination, RdsDatagram.Failure reason,
                           String because) {
            reasons.add(reason);
            why.add(because);
        }

        @Override
        public void zeroCopyCompleted(int cookie) {
            throw new AssertionError("no zero-copy send here");
        }
    }
}
