package org.rds4j;

/**
 * Permission denied: the destination is not among the stack's allowed peers ({@link RdsStackConfig#allowedPeers()}),
 * so the stack would refuse its connections anyway; or the TLS handshakes with it fail (one side does not trust the
 * other's certificate), so no connection to it can authenticate.
 */
public class EaccesException extends RdsException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message what happened, and what the caller can do about it
     */
    public EaccesException(String message) {
        super(Errno.EACCES, message);
    }
}
