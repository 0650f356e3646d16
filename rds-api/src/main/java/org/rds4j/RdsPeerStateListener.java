package org.rds4j;

/**
 * Told when a peer host becomes {@link RdsPeerState#UNREACHABLE}, {@link RdsPeerState#REFUSED} or {@link
 * RdsPeerState#UP} ({@link RdsStack#addPeerStateListener}).
 *
 * <p>Called on the stack's event thread ({@code rds4j-NAME-events}), one event at a time, in the order the changes
 * happened for each peer; never on an I/O thread, so a listener cannot stall traffic. A slow listener delays only the
 * events after it. An exception it throws is logged and the other listeners are called all the same.
 */
@FunctionalInterface
public interface RdsPeerStateListener {
    /**
     * A peer's state changed.
     *
     * @param event the peer, its new state and why
     */
    void peerStateChanged(RdsPeerEvent event);
}
