package org.rds4j;

/**
 * The local address and port are already bound by another RDS socket of the same stack, or the transport's
 * listening port on that address is taken by another process.
 */
public class EaddrinuseException extends RdsException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message what happened, and what the caller can do about it
     */
    public EaddrinuseException(String message) {
        super(Errno.EADDRINUSE, message);
    }

    /**
     * Creates the exception with the failure that caused it.
     *
     * @param message what happened, and what the caller can do about it
     * @param cause the underlying failure
     */
    public EaddrinuseException(String message, Throwable cause) {
        super(Errno.EADDRINUSE, message, cause);
    }
}
