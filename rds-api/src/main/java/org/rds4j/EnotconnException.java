package org.rds4j;

/**
 * The socket is not bound: RDS sockets must be bound to a local address before they can send.
 */
public class EnotconnException extends RdsException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message what happened, and what the caller can do about it
     */
    public EnotconnException(String message) {
        super(Errno.ENOTCONN, message);
    }

    /**
     * Creates the exception with the failure that caused it.
     *
     * @param message what happened, and what the caller can do about it
     * @param cause the underlying failure
     */
    public EnotconnException(String message, Throwable cause) {
        super(Errno.ENOTCONN, message, cause);
    }
}
