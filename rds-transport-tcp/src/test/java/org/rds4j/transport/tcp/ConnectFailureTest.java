package org.rds4j.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.channel.ConnectTimeoutException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.NoRouteToHostException;
import java.net.SocketException;
import org.junit.jupiter.api.Test;
import org.rds4j.core.spi.ConnectResetException;

/**
 * How a failed connect is reported to the core: a reset (the peer's TCP answered, then a process there ended the
 * connection) is a refusal, whichever channel type saw it and in whatever words; everything else that made no
 * connection is passed on as it came. The messages are the ones Netty's native transport and the JDK's NIO give.
 */
class ConnectFailureTest {
    private static final InetSocketAddress PEER = new InetSocketAddress("127.0.36.2", 16385);

    @Test
    void aResetSeenByTheNativeTransportIsARefusal() {
        ConnectException reset = new ConnectException(
                "finishConnect(..) failed with error(-104): Connection reset by peer: /127.0.36.2:16385");
        Throwable told = TcpTransportInstance.connectFailure(PEER, reset);
        ConnectResetException refused = assertInstanceOf(ConnectResetException.class, told);
        assertFalse(refused.authentication(), "a reset is no failed handshake");
        assertSame(reset, refused.getCause());
        assertTrue(refused.getMessage().startsWith("127.0.36.2:16385 reset the connection as it was made"),
                refused.getMessage());
    }

    @Test
    void aResetSeenByNioIsARefusal() {
        SocketException reset = new SocketException("Connection reset");
        assertInstanceOf(ConnectResetException.class, TcpTransportInstance.connectFailure(PEER, reset));
    }

    @Test
    void failuresThatMadeNoConnectionPassUnchanged() {
        Throwable[] none = {
            new ConnectException("finishConnect(..) failed with error(-111): Connection refused: /127.0.36.2:16385"),
            new ConnectException("Connection refused"),
            new ConnectTimeoutException("connection timed out after 5000 ms: /127.0.36.2:16385"),
            new NoRouteToHostException("No route to host"),
            new IllegalStateException("the group was shut down"),
        };
        for (Throwable cause : none) {
            assertSame(cause, TcpTransportInstance.connectFailure(PEER, cause), cause.toString());
        }
    }
}
