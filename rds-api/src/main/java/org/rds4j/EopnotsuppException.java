package org.rds4j;

/**
 * The operation is not supported in this state, such as changing the transport of a socket that already has
 * one, or sending to an IPv6 address from an IPv4-bound socket.
 */
public class EopnotsuppException extends RdsException {
    private static final long serialVersionUID = 1L;

    public EopnotsuppException(String message) {
        super(Errno.EOPNOTSUPP, message);
    }

    public EopnotsuppException(String message, Throwable cause) {
        super(Errno.EOPNOTSUPP, message, cause);
    }
}
