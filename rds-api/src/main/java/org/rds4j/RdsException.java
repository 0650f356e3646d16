package org.rds4j;

import java.io.IOException;

/**
 * An RDS socket call failed for a reason the kernel reports with an errno. Each subclass is named after the errno
 * it mirrors; the message says what happened and what the caller can do about it.
 */
public abstract class RdsException extends IOException {
    private static final long serialVersionUID = 1L;

    private final Errno errno;

    protected RdsException(Errno errno, String message) {
        super(errno.name() + ": " + message);
        this.errno = errno;
    }

    protected RdsException(Errno errno, String message, Throwable cause) {
        super(errno.name() + ": " + message, cause);
        this.errno = errno;
    }

    /** The errno the kernel's RDS would have returned for the same call. */
    public Errno errno() {
        return errno;
    }
}
