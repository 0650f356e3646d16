package org.rds4j;

/**
 * The socket is not bound: RDS sockets must be bound to a local address before they can send.
 */
public class EnotconnException extends RdsException {
    private static final long serialVersionUID = 1L;

    public EnotconnException(String message) {
        super(Errno.ENOTCONN, message);
    }

    public EnotconnException(String message, Throwable cause) {
        super(Errno.ENOTCONN, message, cause);
    }
}
