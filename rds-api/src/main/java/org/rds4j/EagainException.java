package org.rds4j;

/**
 * The call would block: a non-blocking send found the socket's send buffer full, or a non-blocking receive found
 * no message queued. Retry later, or wait for the socket to become ready.
 */
public class EagainException extends RdsException {
    private static final long serialVersionUID = 1L;

    public EagainException(String message) {
        super(Errno.EAGAIN, message);
    }

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
