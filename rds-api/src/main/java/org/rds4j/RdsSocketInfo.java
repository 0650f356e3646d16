package org.rds4j;

import java.net.InetSocketAddress;

/**
 * One socket of a stack at one moment ({@code rds-info -k}, with the queue figures of {@code -r} and of the send
 * side). The budgets are what the kernel's {@code rds-info} calls SndBuf and RcvBuf: half of {@code SO_SNDBUF} and
 * of {@code SO_RCVBUF}.
 *
 * @param boundAddress the local address and RDS port the socket is bound to, or {@code null} if it is not bound
 * @param transport the transport the socket uses (or will use once bound), such as {@code tcp}; {@code null} if
 *        none is chosen yet
 * @param sendBudget the payload bytes the socket may have queued and unacknowledged at once (half of
 *        {@code SO_SNDBUF})
 * @param receiveBudget the payload bytes that may wait unread before the socket's port is marked congested (half
 *        of {@code SO_RCVBUF})
 * @param sendQueuedBytes payload bytes sent and not yet acknowledged by the peer, counted against the send budget
 * @param sendQueuedMessages the messages those bytes belong to
 * @param receiveQueuedBytes payload bytes received and not yet read
 * @param receiveQueuedMessages the messages received and not yet read
 * @param congestionMonitor whether {@code RDS_CONG_MONITOR} is on
 * @param congestionMask the congestion monitor's mask: bit {@code port % 64} for each destination port a send was
 *        refused on, to be reported when a peer's map changes
 * @param congested whether the socket's own port is marked congested in its address's map (its receive queue is
 *        over the budget, and peers hold their sends to it)
 */
public record RdsSocketInfo(InetSocketAddress boundAddress, String transport, long sendBudget, long receiveBudget,
                            long sendQueuedBytes, long sendQueuedMessages, long receiveQueuedBytes,
                            int receiveQueuedMessages, boolean congestionMonitor, long congestionMask,
                            boolean congested) {
}
