package org.rds4j;

/**
 * A blocking call was interrupted: the thread's interrupt (Java's counterpart of the signal that makes the kernel
 * return EINTR) ended the wait. Nothing was sent or received by the call; the thread's interrupt flag stays set.
 * Retry the call if the interrupt was not meant to stop the thread.
 */
public class EintrException extends RdsException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message what happened, and what the caller can do about it
     */
    public EintrException(String message) {
        super(Errno.EINTR, message);
    }

    /**
     * Creates the exception with the failure that caused it.
     *
     * @param message what happened, and what the caller can do about it
     * @param cause the underlying failure
     */
    public EintrException(String message, Throwable cause) {
        super(Errno.EINTR, message, cause);
    }
}
