package org.rds4j.core.path;

import java.util.ArrayList;
import java.util.List;

/** For tests: what a {@link SendQueue} holds, as lists. Read on the path's owner thread, as the queue requires. */
final class SendQueueView {
    private SendQueueView() {
    }

    /**
     * The messages written and kept until the peer has them, or those not yet written, oldest first (the inbox not
     * taken in).
     *
     * @param queue the queue
     * @param written which of the two
     * @return a copy
     */
    static List<OutgoingMessage> messages(SendQueue queue, boolean written) {
        List<OutgoingMessage> list = new ArrayList<>();
        boolean w = queue.lastSent() != null;
        for (OutgoingMessage m = queue.head(); m != null; m = m.next) {
            if (m == queue.firstUnsent()) {
                w = false;
            }
            if (w == written) {
                list.add(m);
            }
        }
        return list;
    }
}
