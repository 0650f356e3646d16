package org.rds4j;

/**
 * The destination port is congested (its receiver is not keeping up) and the send was non-blocking. Nothing was
 * sent; retry after the congestion clears, or send blocking to wait for it.
 */
public class EnobufsException extends RdsException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message what happened, and what the caller can do about it
     */
    public EnobufsException(String message) {
        super(Errno.ENOBUFS, message);
    }

    /**
     * Creates the exception with the failure that caused it.
     *
     * @param message what happened, and what the caller can do about it
     * @param cause the underlying failure
     */
    public EnobufsException(String message, Throwable cause) {
        super(Errno.ENOBUFS, message, cause);
    }

    /**
     * No stack trace: this error is ordinary flow control in a non-blocking loop, thrown at message rates, and the
     * message says all there is to say.
     */
    @Override
    public synchronized Throwable fillInStackTrace() {
        return this;
    }
}
