package org.rds4j.tools;

/**
 * A failure the tool explains in its own words (a missing process, an unreachable agent): printed as its message
 * alone, with exit status 1, not as an exception's class and stack.
 */
final class ToolFailure extends Exception {
    private static final long serialVersionUID = 1L;

    ToolFailure(String message) {
        super(message);
    }

    ToolFailure(String message, Throwable cause) {
        super(message, cause);
    }
}
