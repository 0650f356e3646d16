package org.rds4j.core.path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.rds4j.core.cong.CongestionMap;
import org.rds4j.core.wire.RdsHeader;

/**
 * A path's state has one owner, its connection's I/O thread (docs/threading.md): every method that changes it asserts
 * the thread, so a call from any other thread fails at once instead of racing. Here the test's thread is the fake
 * transport's I/O thread, and a second thread plays an intruder.
 */
class OwnerThreadTest {
    private final FakeEnvironment env = new FakeEnvironment(5);
    private final FakeTransport transport = new FakeTransport(env.scheduler);

    @Test
    void assertionsAreOn() {
        boolean on = false;
        assert on = true;
        assertTrue(on, "the tests must run with assertions enabled (-ea): the owner checks are assertions");
    }

    @Test
    void pathStateTouchedOffItsOwnerThreadFailsAtOnce() throws Exception {
        Connection connection = new Connection(InetAddress.getByName("10.0.0.1"), InetAddress.getByName("10.0.0.2"),
                "fake", transport, env, new CongestionMap());
        ConnectionPath path = connection.path(0);
        path.connectIfDown();
        FakeTransport.FakeConnection up = transport.connected(transport.pendingAttempts().get(0));
        assertEquals(PathState.UP, path.state());

        AssertionError e = intrude(p -> p.releaseUpTo(1), path);
        assertTrue(e.getMessage().contains("does not own"), e.getMessage());
        intrude(p -> p.receiver().receive(header(1), up.handler instanceof PathConnection pc ? pc : null), path);
        intrude(p -> p.closed(null, new IOException("not from here")), path);
        intrude(p -> p.connection().retire(), path);
        assertEquals(PathState.UP, path.state(), "nothing an intruder tried went through");

        // The same work handed to the owner runs there.
        assertEquals(0, path.purge(new PathHarness.Owner()));
        assertTrue(connection.call(connection::inOwner, false));
    }

    /** Runs {@code action} on another thread and returns the assertion it must fail with. */
    private static AssertionError intrude(Consumer<ConnectionPath> action, ConnectionPath path)
            throws InterruptedException, java.util.concurrent.TimeoutException {
        CompletableFuture<Void> done = new CompletableFuture<>();
        Thread intruder = new Thread(() -> {
            try {
                action.accept(path);
                done.complete(null);
            } catch (Throwable t) {
                done.completeExceptionally(t);
            }
        }, "intruder");
        intruder.start();
        ExecutionException failed = assertThrows(ExecutionException.class, () -> done.get(10, TimeUnit.SECONDS));
        intruder.join(TimeUnit.SECONDS.toMillis(10));
        assertTrue(failed.getCause() instanceof AssertionError, "expected the owner check to fire: " + failed.getCause());
        return (AssertionError) failed.getCause();
    }

    private static RdsHeader header(long seq) {
        ByteBuffer b = ByteBuffer.allocate(RdsHeader.SIZE);
        new RdsHeader().sequence(seq).sourcePort(4000).destinationPort(4001).encode(b);
        return new RdsHeader().decode(b.flip());
    }
}
