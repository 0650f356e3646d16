package org.rds4j.core.path;

/**
 * The states of a connection path, as the kernel names them ({@code RDS_CONN_*}). rds4j does without the kernel's
 * ERROR and RESETTING, which exist there to hand work between its workers: a drop here goes straight to
 * DISCONNECTING while the transport closes, then DOWN.
 */
public enum PathState {
    /** No transport connection; messages queue. */
    DOWN,
    /** A transport connection is being opened (or, on the larger address, the peer was poked). */
    CONNECTING,
    /** A transport connection carries frames. */
    UP,
    /** The transport connection is being closed; the path goes DOWN when it is. */
    DISCONNECTING
}
