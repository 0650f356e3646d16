package org.rds4j.core.spi;

import java.io.IOException;

/**
 * What a transport reports to {@link ConnectionHandler#onConnectFailed} when the connection to the peer was made but
 * the peer ended it before it could carry RDS: its authentication failed (a TLS handshake error), or the peer closed
 * it during the handshake (a stack whose admission refuses us resets it so). A failure to make the connection at all
 * (nothing listening, no route) is any other exception. Also the cause {@link ConnectionHandler#onClosed} gets for a
 * connection that authentication ended after the transport had reported it connected (with TLS 1.3 the server checks
 * the client's certificate after the client's side of the handshake is done).
 */
public class PeerRefusedException extends IOException {
    private static final long serialVersionUID = 1L;

    /** Whether the handshake itself failed (certificates), rather than the peer closing before it ended. */
    private final boolean authentication;

    /**
     * @param message what happened, in words
     * @param authentication true if the handshake failed (the peers do not trust each other's certificates), false
     *        if the peer ended the connection before the handshake did
     * @param cause the transport's own error, or {@code null}
     */
    public PeerRefusedException(String message, boolean authentication, Throwable cause) {
        super(message, cause);
        this.authentication = authentication;
    }

    /**
     * Whether the handshake failed, rather than the peer ending the connection first.
     *
     * @return true for an authentication failure
     */
    public boolean authentication() {
        return authentication;
    }
}
