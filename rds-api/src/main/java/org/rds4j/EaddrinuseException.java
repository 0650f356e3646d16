package org.rds4j;

/**
 * The local address and port are already bound by another RDS socket of the same stack, or the transport's
 * listening port on that address is taken by another process.
 */
public class EaddrinuseException extends RdsException {
    private static final long serialVersionUID = 1L;

    public EaddrinuseException(String message) {
        super(Errno.EADDRINUSE, message);
    }

    public EaddrinuseException(String message, Throwable cause) {
        super(Errno.EADDRINUSE, message, cause);
    }
}
