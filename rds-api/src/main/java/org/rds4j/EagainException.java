package org.rds4j;

/**
 * The call would block: a non-blocking send found the socket's send buffer full, or a non-blocking receive found
 * no message queued. Retry later, or wait for the socket to become ready.
 */
public class EagainException extends RdsException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message what happened, and what the caller can do about it
     */
    public EagainException(String message) {
        super(Errno.EAGAIN, message);
    }

    /**
     * Creates the exception with the failure that caused it.
     *
     * @param message what happened, and what the caller can do about it
     * @param cause the underlying failure
     */
    public EagainException(String message, Throwable cause) {
        super(Errno.EAGAIN, message, cause);
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
