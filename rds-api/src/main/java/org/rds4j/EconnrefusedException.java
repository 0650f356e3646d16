package org.rds4j;

/**
 * Connection refused: the destination's stack refuses this host's connections (it reset the last attempts before
 * any RDS frame, as a stack does whose allow-list or peer limit leaves this host out). Sends to it fail so until a
 * connection to it carries a frame again; the stack keeps trying with its reconnect backoff meanwhile.
 */
public class EconnrefusedException extends RdsException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message what happened, and what the caller can do about it
     */
    public EconnrefusedException(String message) {
        super(Errno.ECONNREFUSED, message);
    }
}
