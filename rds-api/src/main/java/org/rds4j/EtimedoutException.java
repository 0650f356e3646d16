package org.rds4j;

/**
 * A blocking call waited longer than the socket's timeout ({@code SO_SNDTIMEO} for sends).
 */
public class EtimedoutException extends RdsException {
    private static final long serialVersionUID = 1L;

    public EtimedoutException(String message) {
        super(Errno.ETIMEDOUT, message);
    }

    public EtimedoutException(String message, Throwable cause) {
        super(Errno.ETIMEDOUT, message, cause);
    }
}
