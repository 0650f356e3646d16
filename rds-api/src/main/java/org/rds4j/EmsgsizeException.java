package org.rds4j;

/**
 * The message is too large: its payload is above RDS's maximum of 1 MiB, or above the socket's send buffer budget
 * (half of {@code SO_SNDBUF}, as in the kernel). Nothing was sent.
 */
public class EmsgsizeException extends RdsException {
    private static final long serialVersionUID = 1L;

    public EmsgsizeException(String message) {
        super(Errno.EMSGSIZE, message);
    }

    public EmsgsizeException(String message, Throwable cause) {
        super(Errno.EMSGSIZE, message, cause);
    }
}
