package org.rds4j;

/**
 * The operation is not supported in this state, such as changing the transport of a socket that already has
 * one, or sending to an IPv6 address from an IPv4-bound socket.
 */
public class EopnotsuppException extends RdsException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message what happened, and what the caller can do about it
     */
    public EopnotsuppException(String message) {
        super(Errno.EOPNOTSUPP, message);
    }

    /**
     * Creates the exception with the failure that caused it.
     *
     * @param message what happened, and what the caller can do about it
     * @param cause the underlying failure
     */
    public EopnotsuppException(String message, Throwable cause) {
        super(Errno.EOPNOTSUPP, message, cause);
    }
}
