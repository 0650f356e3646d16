package org.rds4j.core.path;

import org.rds4j.core.cong.CongestionMap;

/** What a socket's sends ask of the connection to their peer ({@link Connection}): where messages go, and when. */
public interface SendTarget {
    /**
     * The peer's congestion map, as last received.
     *
     * @return the map; senders test the destination port's bit in it before queueing
     */
    CongestionMap peerMap();

    /**
     * How many paths are in use.
     *
     * @return 1, 2, 4 or 8
     */
    int lanes();

    /**
     * A message joined a path's inbox after its sender read {@code lanes} ({@link Connection#queued}).
     *
     * @param sourcePort the sending socket's RDS port
     * @param lanes the lanes the sender read before it queued the message
     */
    void queued(int sourcePort, int lanes);

    /**
     * Queues a socket's message on the path it sends on ({@link Connection#enqueue}).
     *
     * @param sourcePort the sending socket's RDS port, 0 to 65535
     * @param m the filled message
     */
    void enqueue(int sourcePort, OutgoingMessage m);
}
