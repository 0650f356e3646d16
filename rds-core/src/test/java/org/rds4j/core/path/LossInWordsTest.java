package org.rds4j.core.path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.SocketException;
import org.junit.jupiter.api.Test;

/** The words a lost connection is logged with: what happened, never a transport's exception class. */
class LossInWordsTest {
    /** A transport's own exception type, as Netty's native errors are: its name must not reach the INFO line. */
    private static final class NativeIoLikeException extends IOException {
        NativeIoLikeException(String message) {
            super(message);
        }
    }

    @Test
    void commonEndsOfATcpConnectionInWords() {
        assertTrue(ConnectionPath.inWords(new NativeIoLikeException("recvAddress(..) failed: Connection reset by peer"))
                .startsWith("the peer reset it"));
        assertTrue(ConnectionPath.inWords(new SocketException("Connection reset")).startsWith("the peer reset it"));
        assertTrue(ConnectionPath.inWords(new NativeIoLikeException("writevAddresses(..) failed: Broken pipe"))
                .startsWith("the peer had closed it while we were still writing"));
        assertTrue(ConnectionPath.inWords(new IOException("Connection timed out")).startsWith("it timed out"));
    }

    @Test
    void otherFailuresKeepTheirMessageAndNeverTheClass() {
        assertEquals("frame checksum mismatch", ConnectionPath.inWords(new IOException("frame checksum mismatch")));
        String none = ConnectionPath.inWords(new NativeIoLikeException(null));
        assertEquals("the transport failed (NativeIoLikeException)", none);
    }
}
