package org.rds4j.core.wire;

/**
 * A peer sent bytes that cannot be an RDS stream (such as a message longer than any RDS sender produces). The
 * codec's only error: the connection that carried the bytes is dropped, and the core logs the reason.
 */
public final class RdsProtocolException extends Exception {
    private static final long serialVersionUID = 1L;

    /**
     * An exception for one protocol violation.
     *
     * @param message what the peer sent and why it cannot be RDS, for the log
     */
    public RdsProtocolException(String message) {
        super(message);
    }
}
