package org.rds4j;

/**
 * The socket is closed: it was closed before the call, or while the call was blocked in it.
 */
public class EbadfException extends RdsException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message what happened, and what the caller can do about it
     */
    public EbadfException(String message) {
        super(Errno.EBADF, message);
    }

    /**
     * Creates the exception with the failure that caused it.
     *
     * @param message what happened, and what the caller can do about it
     * @param cause the underlying failure
     */
    public EbadfException(String message, Throwable cause) {
        super(Errno.EBADF, message, cause);
    }
}
