package org.rds4j;

import java.io.IOException;

/**
 * An RDS socket call failed for a reason the kernel reports with an errno. Each subclass is named after the errno
 * it mirrors; the message says what happened and what the caller can do about it.
 */
public abstract class RdsException extends IOException {
    private static final long serialVersionUID = 1L;

    /** The errno this exception mirrors (part of the serialized form). */
    private final Errno errno;

    /**
     * Creates the exception; its message starts with the errno's name.
     *
     * @param errno the errno the kernel would have returned
     * @param message what happened, and what the caller can do about it
     */
    protected RdsException(Errno errno, String message) {
        super(errno.name() + ": " + message);
        this.errno = errno;
    }

    /**
     * Creates the exception with the failure that caused it; its message starts with the errno's name.
     *
     * @param errno the errno the kernel would have returned
     * @param message what happened, and what the caller can do about it
     * @param cause the underlying failure
     */
    protected RdsException(Errno errno, String message, Throwable cause) {
        super(errno.name() + ": " + message, cause);
        this.errno = errno;
    }

    /**
     * The errno the kernel's RDS would have returned for the same call.
     *
     * @return the errno
     */
    public Errno errno() {
        return errno;
    }
}
