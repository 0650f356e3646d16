package org.rds4j;

/**
 * An argument is not valid for an RDS socket: an address that cannot be bound or sent to (wildcard, multicast,
 * broadcast, the reserved port 1), a socket bound twice, or an option value out of range.
 */
public class EinvalException extends RdsException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message what happened, and what the caller can do about it
     */
    public EinvalException(String message) {
        super(Errno.EINVAL, message);
    }

    /**
     * Creates the exception with the failure that caused it.
     *
     * @param message what happened, and what the caller can do about it
     * @param cause the underlying failure
     */
    public EinvalException(String message, Throwable cause) {
        super(Errno.EINVAL, message, cause);
    }
}
