package org.rds4j;

/**
 * An argument is not valid for an RDS socket: an address that cannot be bound or sent to (wildcard, multicast,
 * broadcast, the reserved port 1), a socket bound twice, or an option value out of range.
 */
public class EinvalException extends RdsException {
    private static final long serialVersionUID = 1L;

    public EinvalException(String message) {
        super(Errno.EINVAL, message);
    }

    public EinvalException(String message, Throwable cause) {
        super(Errno.EINVAL, message, cause);
    }
}
