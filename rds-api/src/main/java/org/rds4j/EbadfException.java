package org.rds4j;

/**
 * The socket is closed: it was closed before the call, or while the call was blocked in it.
 */
public class EbadfException extends RdsException {
    private static final long serialVersionUID = 1L;

    public EbadfException(String message) {
        super(Errno.EBADF, message);
    }

    public EbadfException(String message, Throwable cause) {
        super(Errno.EBADF, message, cause);
    }
}
