package org.rds4j;

/**
 * What a stack knows about a peer host it talks to, as {@link RdsPeerStateListener}s and the stack's JMX MBean report
 * it. A peer starts out unreported (connecting); each change after that is one event.
 */
public enum RdsPeerState {
    /** A connection to the peer carries RDS frames: the peer is there and talks to this host. */
    UP,
    /**
     * {@link RdsStackConfig#peerFailureThreshold()} attempts in a row made no TCP connection (nothing listens, no
     * route, a timeout), or the peer was up and that many attempts since failed so. Attempts go on with the reconnect
     * backoff; messages stay queued unless {@link RdsStackConfig#unreachableTimeout()} is set.
     */
    UNREACHABLE,
    /**
     * The peer's stack refuses this host: that many connections in a row ended before the peer sent anything (counted
     * only for a peer not heard from since it was last unreachable: a kernel that lost a path ends connections so for
     * a while too), or their TLS handshakes failed. Queued messages failed, sends fail at once; attempts go on with the backoff, and the first
     * connection that carries a frame makes the peer {@link #UP} again.
     */
    REFUSED
}
