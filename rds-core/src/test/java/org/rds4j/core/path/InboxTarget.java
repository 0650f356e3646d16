package org.rds4j.core.path;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;
import org.rds4j.core.cong.CongestionMap;
import org.rds4j.core.stack.RdsCounters;

/**
 * For tests of a socket's sends: a {@link SendTarget} with one lane whose messages go into a real path's inbox
 * ({@link SendQueue#push}), which the test takes in as the path does ({@link SendQueue#takeInbox}: runs sealed,
 * messages numbered in push order).
 */
public final class InboxTarget implements SendTarget {
    private final CongestionMap peerMap = new CongestionMap();
    private final SendQueue queue = new SendQueue(InetAddress.getLoopbackAddress(), new RdsCounters());
    private OutgoingMessage seen;

    @Override
    public CongestionMap peerMap() {
        return peerMap;
    }

    @Override
    public int lanes() {
        return 1;
    }

    @Override
    public void queued(int sourcePort, int lanes) {
        // one lane, never more: no catch-up to restart
    }

    @Override
    public void enqueue(int sourcePort, OutgoingMessage m) {
        queue.push(m);
    }

    /**
     * Takes the inbox in, as the path does; one thread at a time, as the path is one.
     *
     * @return the lengths of the messages it brought, in sequence order (a run's one by one)
     */
    public List<Integer> take() {
        queue.takeInbox();
        List<Integer> lengths = new ArrayList<>();
        for (OutgoingMessage m = seen == null ? queue.head() : seen.next; m != null; m = m.next) {
            for (int i = 0; i < m.entries(); i++) {
                lengths.add(m.length(i));
            }
            seen = m;
        }
        return lengths;
    }
}
