package org.rds4j.core.spi;

/**
 * A {@link PeerRefusedException} for a connect that failed on a reset: the peer's TCP answered the handshake (with
 * nothing listening it would have refused the SYN) and a process there reset the connection before this side had
 * finished connecting. A connection that one of our pokes opened is reset so too by a smaller peer that connects back
 * (docs/protocol.md), which is why the core tells this case apart from the other refusals.
 */
public class ConnectResetException extends PeerRefusedException {
    private static final long serialVersionUID = 1L;

    /**
     * @param message what happened, in words
     * @param cause the transport's own error
     */
    public ConnectResetException(String message, Throwable cause) {
        super(message, false, cause);
    }
}
