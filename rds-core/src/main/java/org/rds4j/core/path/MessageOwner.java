package org.rds4j.core.path;

import java.net.InetSocketAddress;
import org.rds4j.RdsDatagram;

/**
 * The socket a queued message belongs to, as a connection path sees it. The path calls these on its I/O thread (or
 * the thread that resets or cancels), never while the socket's own lock is held by the caller.
 */
public interface MessageOwner {
    /**
     * The socket is closed: its messages are dropped instead of being sent.
     *
     * @return true once the socket is closed
     */
    boolean isClosed();

    /**
     * The peer has {@code count} more of this socket's messages, {@code bytes} payload bytes in all (or the socket
     * closed and they were dropped): give the space back, and take the queue entries, linked through
     * {@link OutgoingMessage#next} from {@code first} to {@code last} in sequence order, back for reuse. Called once
     * per batch of releases, not per message, so that waking a blocked sender and recycling cost once per
     * acknowledgement. The path does not touch the entries after this call.
     *
     * @param first the first released entry, the lowest sequence number
     * @param last the last released entry
     * @param entries how many entries the chain holds
     * @param count how many messages they carry (more than {@code entries} when some are runs: {@link MessageRun})
     * @param bytes their payload bytes in all
     */
    void released(OutgoingMessage first, OutgoingMessage last, int entries, int count, long bytes);

    /**
     * The message will not be delivered: it left the send buffer without reaching the peer; for a run
     * ({@link OutgoingMessage#entries()} above 1), none of the messages it carries will. The path does not touch the
     * entry after this call (the owner recycles it).
     *
     * @param message the message that failed
     * @param destination where it was going
     * @param reason why
     * @param why the cause in words and what to do about it, for the notification's
     *        {@link RdsDatagram#failureReason()}; {@code null} when the reason says it all
     */
    void failed(OutgoingMessage message, InetSocketAddress destination, RdsDatagram.Failure reason, String why);

    /**
     * A zero-copy message's bytes are no longer read by anyone: report {@code cookie} to the caller. Called by the
     * transport's thread that gave the bytes back, for a message that was done with while they were still lent
     * ({@link OutgoingMessage#completeZeroCopy} returned false); otherwise the owner reports the cookie itself.
     *
     * @param cookie the caller's number for the send
     */
    void zeroCopyCompleted(int cookie);

    /**
     * The account the direct buffers of this owner's large messages are taken from.
     *
     * @return the stack's off-heap account, or {@code null} to allocate direct buffers unaccounted
     */
    default org.rds4j.core.spi.OffHeapMemory offHeap() {
        return null;
    }

    /**
     * Under caller I/O: whether the send in progress runs its path's pass in the sending thread. A socket's first send
     * since its last receive does (a reply, or the next request after an answer); its further sends go to the I/O
     * thread, where they batch (decision 0031). Read by the sending thread right after it queued the message.
     *
     * @return whether the sending thread transmits
     */
    default boolean sendsInCaller() {
        return false;
    }
}
