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
        Objects.requireNonNull(local, "local is null: pass this stack's address the connection is from");
        Objects.requireNonNull(peer, "peer is null: pass the peer's address");
        Objects.requireNonNull(transport, "transport is null: pass the transport's name, such as tcp");
        Objects.requireNonNull(state, "state is null: pass the peer's new state");
        Objects.requireNonNull(reason, "reason is null: pass the cause in words");
    }
}
