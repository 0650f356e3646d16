package org.rds4j;

/**
 * The message is too large: its payload is above RDS's maximum of 1 MiB, or above the socket's send buffer budget
 * (half of {@code SO_SNDBUF}, as in the kernel). Nothing was sent.
 */
public class EmsgsizeException extends RdsException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message what happened, and what the caller can do about it
     */
    public EmsgsizeException(String message) {
        super(Errno.EMSGSIZE, message);
    }

    /**
     * Creates the exception with the failure that caused it.
     *
     * @param message what happened, and what the caller can do about it
     * @param cause the underlying failure
     */
    public EmsgsizeException(String message, Throwable cause) {
        super(Errno.EMSGSIZE, message, cause);
    }
}
