package org.rds4j;

/**
 * A blocking call waited longer than the socket's timeout ({@code SO_SNDTIMEO} for sends).
 */
public class EtimedoutException extends RdsException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message what happened, and what the caller can do about it
     */
    public EtimedoutException(String message) {
        super(Errno.ETIMEDOUT, message);
    }

    /**
     * Creates the exception with the failure that caused it.
     *
     * @param message what happened, and what the caller can do about it
     * @param cause the underlying failure
     */
    public EtimedoutException(String message, Throwable cause) {
        super(Errno.ETIMEDOUT, message, cause);
    }
}
