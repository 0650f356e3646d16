package org.rds4j;

import java.net.InetAddress;
import java.util.Objects;

/**
 * A peer's state changed.
 *
 * @param local this stack's address the connection is from
 * @param peer the peer's address
 * @param transport the transport, such as {@code tcp}
 * @param state the new state
 * @param previous the state before, or {@code null} for the first report of the peer
 * @param reason the cause in words and what to do about it; for {@link RdsPeerState#UP}, how the peer was found
 */
public record RdsPeerEvent(InetAddress local, InetAddress peer, String transport, RdsPeerState state,
                           RdsPeerState previous, String reason) {
    /**
     * Checks the event's parts.
     *
     * @param local this stack's address the connection is from
     * @param peer the peer's address
     * @param transport the transport, such as {@code tcp}
     * @param state the new state
     * @param previous the state before, or {@code null} for the first report of the peer
     * @param reason the cause in words
     * @throws NullPointerException if an argument but {@code previous} is null
     */
    public RdsPeerEvent {
        Objects.requireNonNull(local, "local");
        Objects.requireNonNull(peer, "peer");
        Objects.requireNonNull(transport, "transport");
        Objects.requireNonNull(state, "state");
        Objects.requireNonNull(reason, "reason");
    }
}
