package org.rds4j.core.stack;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.LinkedHashMap;
import java.util.Map;
import org.rds4j.core.util.SnapshotSet;

/**
 * A stack's statistics, named and ordered as the kernel's RDS counters ({@code rds-info -c}) so that the numbers of
 * an rds4j host and a Linux host can be read side by side. Only counters rds4j has a meaning for are kept.
 */
public final class RdsCounters {

    /** The counters, in the kernel's order. */
    public enum Counter {
        /** A connection path was reset (dropped) and will reconnect. */
        CONN_RESET("conn_reset"),
        /** A retransmitted message the receiver already had was dropped. */
        RECV_DROP_OLD_SEQ("recv_drop_old_seq"),
        /** A message arrived for a port no socket is bound to. */
        RECV_DROP_NO_SOCK("recv_drop_no_sock"),
        /** A message arrived for a socket that was closing. */
        RECV_DROP_DEAD_SOCK("recv_drop_dead_sock"),
        /** A message was returned by {@code receive()}. */
        RECV_DELIVERED("recv_delivered"),
        /** A message was queued on a socket. */
        RECV_QUEUED("recv_queued"),
        /** A ping (message to port 0) was answered. */
        RECV_PING("recv_ping"),
        /** {@code send()} found the send buffer full. */
        SEND_QUEUE_FULL("send_queue_full"),
        /** A message was queued for sending. */
        SEND_QUEUED("send_queued"),
        /** A pong or multipath probe was queued. */
        SEND_PONG("send_pong"),
        /** A congestion-map update was queued for sending. */
        CONG_UPDATE_QUEUED("cong_update_queued"),
        /** A peer's congestion map arrived. */
        CONG_UPDATE_RECEIVED("cong_update_received"),
        /** A non-blocking send failed with ENOBUFS: the destination port was congested. */
        CONG_SEND_ERROR("cong_send_error"),
        /** A blocking send waited for a congested port. */
        CONG_SEND_BLOCKED("cong_send_blocked"),
        /** Payload bytes queued on sockets. */
        RECV_BYTES_ADDED_TO_SOCK("recv_bytes_added_to_sock"),
        /** Payload bytes taken off sockets. */
        RECV_BYTES_FREED_FROMSOCK("recv_bytes_freed_fromsock"),
        /** rds4j: messages sent again after a path reset (the kernel counts no such thing over TCP). */
        SEND_RETRANSMITTED("send_retransmitted"),
        /** rds4j: a peer sent a stream that is not RDS (the connection was dropped). */
        RECV_PROTOCOL_ERROR("recv_protocol_error"),
        /** rds4j: ack-only messages sent to an acknowledging (rds4j) peer. */
        ACK_SENT("ack_sent"),
        /** rds4j: acknowledgements received (a non-zero h_ack, or the pong to one of our acknowledgement pings). */
        ACK_RECEIVED("ack_received"),
        /** rds4j: pings sent to learn what the peer has (kernel peers never acknowledge over TCP). */
        ACK_PING_SENT("ack_ping_sent"),
        /** rds4j: unacknowledged messages discarded because the peer restarted (the kernel's FLUSH). */
        SEND_FLUSHED("send_flushed"),
        /** rds4j: connections dropped because the peer stayed silent for the liveness interval. */
        CONN_DEAD_PEER("conn_dead_peer"),
        /** The lanes had opened and path 0 had not yet caught up: the other paths held their messages. */
        MPRDS_CATCHUP_TX0_RETRIES("mprds_catchup_tx0_retries"),
        /**
         * rds4j: a connection the peer opened was refused because no path was free for it: at once when too many
         * waited already, else after waiting in vain.
         */
        CONN_ACCEPT_REFUSED("conn_accept_refused"),
        /** rds4j: a connection the peer opened waited, unread, because no path was free for it yet. */
        CONN_ACCEPT_DEFERRED("conn_accept_deferred"),
        /** rds4j: an acknowledgement ping went unanswered too long and was asked again. */
        ACK_PING_EXPIRED("ack_ping_expired"),
        /** rds4j: a peer answered no acknowledgement ping for seconds; what the path held was failed. */
        ACK_PEER_UNRESPONSIVE("ack_peer_unresponsive"),
        /** rds4j: a connection stopped reading because its peer had more unread messages queued than its bound. */
        RECV_PEER_PAUSED("recv_peer_paused"),
        /** rds4j: a ping went unanswered because its path already held the most pongs the peer had not acknowledged. */
        RECV_PING_UNANSWERED("recv_ping_unanswered"),
        /** rds4j: a connection was refused before anything was kept for its peer (allow-list, maxPeers). */
        CONN_PEER_REFUSED("conn_peer_refused"),
        /** rds4j: a connection was dropped because a message started on it did not complete within frameTimeout. */
        RECV_FRAME_TIMEOUT("recv_frame_timeout"),
        /** rds4j: a TLS handshake failed, on a connection we made or one a peer made (refused for it). */
        CONN_TLS_HANDSHAKE_FAILED("conn_tls_handshake_failed"),
        /**
         * rds4j: a connection we made to a peer ended before the peer sent anything, or its TLS handshake failed: the
         * peer refused us (path 0's attempts; see RdsStackConfig.peerFailureThreshold).
         */
        CONN_REFUSED_BY_PEER("conn_refused_by_peer"),
        /** rds4j: an attempt to connect to a peer made no connection (nothing listening, no route, a timeout). */
        CONN_CONNECT_FAILED("conn_connect_failed"),
        /**
         * rds4j: reads of a path's socket by an application thread, over TCP under busy-poll or tcp.callerIo (caller
         * I/O).
         */
        CALLER_READS("caller_reads"),
        /**
         * rds4j: transmit passes an application thread wrote itself, over TCP under busy-poll or tcp.callerIo (caller
         * I/O).
         */
        CALLER_PASSES("caller_passes");

        private final String kernelName;

        Counter(String kernelName) {
            this.kernelName = kernelName;
        }

        /**
         * The name {@code rds-info -c} prints.
         *
         * @return the kernel's name of the counter, such as {@code conn_reset}
         */
        public String kernelName() {
            return kernelName;
        }
    }

    /**
     * One counter per 128 bytes of one array: counters that different threads bump on the message path (senders,
     * I/O threads, readers) never share a cache line, so counting costs an uncontended atomic add instead of a line
     * bouncing between cores (adjacent LongAdder objects shared lines, and their bases were bumped per message).
     */
    private static final int STRIDE = 16;
    private static final VarHandle SLOT = MethodHandles.arrayElementVarHandle(long[].class);
    private final long[] values = new long[(Counter.values().length + 1) * STRIDE];
    /** Who keeps part of a count in fields of its own: added to the slots on every read. */
    private final SnapshotSet<Source> sources = new SnapshotSet<>(Source[]::new);

    /**
     * Part of some counters, kept by one owner in plain fields instead of with an atomic add per event: a socket's
     * receive queue counts what its readers take under the lock they hold anyway. Reads add every source's share,
     * and a source that leaves moves its share into the counters ({@link #fold}); both under this object's monitor,
     * so that no read sees a share twice or not at all.
     */
    public interface Source {
        /**
         * This source's share of a counter, read without its owner's lock.
         *
         * @param c the counter
         * @return what this source counted of it, 0 for a counter it does not keep
         */
        long share(Counter c);
    }

    /**
     * Adds a source, whose shares every read includes from now on.
     *
     * @param s the source
     */
    public void addSource(Source s) {
        sources.add(s);
    }

    /**
     * A source leaves: its shares move into the counters, one step to any read. The caller holds what keeps the
     * source from counting meanwhile, and counts with {@link #add} from then on. The monitor is a leaf.
     *
     * @param s the source
     */
    public synchronized void fold(Source s) {
        if (sources.remove(s)) {
            for (Counter c : Counter.values()) {
                long v = s.share(c);
                if (v != 0) {
                    add(c, v);
                }
            }
        }
    }

    /**
     * Adds one to a counter. Lock-free, from any thread.
     *
     * @param c the counter
     */
    public void increment(Counter c) {
        SLOT.getAndAdd(values, (c.ordinal() + 1) * STRIDE, 1L);
    }

    /**
     * Adds {@code n} to a counter, such as a byte count. Lock-free, from any thread.
     *
     * @param c the counter
     * @param n the amount to add
     */
    public void add(Counter c, long n) {
        SLOT.getAndAdd(values, (c.ordinal() + 1) * STRIDE, n);
    }

    /**
     * A counter's value.
     *
     * @param c the counter
     * @return its total since the stack started
     */
    public synchronized long get(Counter c) {
        long v = (long) SLOT.getVolatile(values, (c.ordinal() + 1) * STRIDE);
        for (Source s : sources.members()) {        // under the monitor: no source folds meanwhile
            v += s.share(c);
        }
        return v;
    }

    /**
     * A snapshot, keyed by kernel name, in the kernel's order.
     *
     * @return a new map from each counter's kernel name to its value
     */
    public synchronized Map<String, Long> snapshot() {
        Map<String, Long> m = new LinkedHashMap<>();
        for (Counter c : Counter.values()) {
            m.put(c.kernelName(), get(c));
        }
        return m;
    }
}
