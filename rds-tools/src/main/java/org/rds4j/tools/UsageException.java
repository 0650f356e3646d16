package org.rds4j.tools;

/** The command line is wrong: the message says how, and the tool prints its usage and exits with status 2. */
final class UsageException extends Exception {
    private static final long serialVersionUID = 1L;

    UsageException(String message) {
        super(message);
    }

    UsageException(String message, Throwable cause) {
        super(message, cause);
    }
}
