package org.rds4j;

import java.net.InetSocketAddress;
import java.util.Objects;

/**
 * One path of a connection at one moment (the kernel's {@code rds_conn_path}): its state, its two sequence numbers,
 * the messages it holds, and the transport connection it runs on. The figures were read together, so they agree with
 * each other.
 *
 * @param index the path's index within its connection (the kernel's {@code cp_index}), 0 while rds4j uses one path
 * @param state where the path is in its life
 * @param nextTxSequence the sequence number the next message queued on the path will get, unsigned 64-bit
 * @param nextRxSequence the sequence number the path expects next from the peer (older retransmitted ones are
 *        dropped as duplicates), unsigned 64-bit; 0 before anything arrived
 * @param queuedMessages messages queued and not yet written (the kernel's send queue, {@code rds-info -s}),
 *        including rds4j's own pings and acknowledgements
 * @param queuedBytes the payload bytes of those messages
 * @param unackedMessages messages written and kept until the peer is known to have them (the kernel's
 *        retransmit queue, {@code rds-info -t})
 * @param unackedBytes the payload bytes of those messages
 * @param resets how many times the path's connection was lost after it was up
 * @param transportLocal the local end of the transport connection (for TCP, our address and TCP port), or
 *        {@code null} while there is none
 * @param transportRemote the peer's end of the transport connection, or {@code null} while there is none
 */
public record RdsPathInfo(int index, State state, long nextTxSequence, long nextRxSequence, int queuedMessages,
                          long queuedBytes, int unackedMessages, long unackedBytes, long resets,
                          InetSocketAddress transportLocal, InetSocketAddress transportRemote) {

    /** Where a path is in its life. */
    public enum State {
        /** No transport connection; the path connects when a message is queued (or the peer connects). */
        DOWN,
        /** A transport connection is being opened. */
        CONNECTING,
        /** Connected: messages flow ({@code rds-info -n} flag {@code C}). */
        UP,
        /** The connection is being dropped; the path reconnects after. */
        DISCONNECTING
    }

    /**
     * Checks the state.
     *
     * @param index the path's index
     * @param state its state
     * @param nextTxSequence the next sequence number to send
     * @param nextRxSequence the next sequence number expected
     * @param queuedMessages messages not yet written
     * @param queuedBytes their bytes
     * @param unackedMessages messages written and not acknowledged
     * @param unackedBytes their bytes
     * @param resets resets of the path
     * @param transportLocal the transport connection's local end, or {@code null}
     * @param transportRemote the transport connection's remote end, or {@code null}
     */
    public RdsPathInfo {
        Objects.requireNonNull(state, "state is null: pass the path's State");
    }
}
