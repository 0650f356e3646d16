package org.rds4j;

/**
 * The option or transport is not available: an unknown socket option, or a transport name for which no
 * implementation is on the class or module path.
 */
public class EnoprotooptException extends RdsException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message what happened, and what the caller can do about it
     */
    public EnoprotooptException(String message) {
        super(Errno.ENOPROTOOPT, message);
    }

    /**
     * Creates the exception with the failure that caused it.
     *
     * @param message what happened, and what the caller can do about it
     * @param cause the underlying failure
     */
    public EnoprotooptException(String message, Throwable cause) {
        super(Errno.ENOPROTOOPT, message, cause);
    }
}
