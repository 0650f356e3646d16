package org.rds4j;

/**
 * The address is not one this stack can bind: it is not a local address of the machine (for TCP) or not
 * among the stack's configured addresses.
 */
public class EaddrnotavailException extends RdsException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message what happened, and what the caller can do about it
     */
    public EaddrnotavailException(String message) {
        super(Errno.EADDRNOTAVAIL, message);
    }

    /**
     * Creates the exception with the failure that caused it.
     *
     * @param message what happened, and what the caller can do about it
     * @param cause the underlying failure
     */
    public EaddrnotavailException(String message, Throwable cause) {
        super(Errno.EADDRNOTAVAIL, message, cause);
    }
}
