package org.rds4j.core.path;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import org.rds4j.RdsDatagram;

/**
 * A socket as a zero-copy loan sees it: it records the cookies reported to it, in order, and is handed nothing else
 * (a release or a failure is a test's mistake). Reports may come from several threads.
 */
final class CookieRecorder implements MessageOwner {
    private final List<Integer> reported = new ArrayList<>();

    /** The cookies reported so far, in the order they came. */
    synchronized List<Integer> reported() {
        return List.copyOf(reported);
    }

    @Override
    public boolean isClosed() {
        return false;
    }

    @Override
    public void released(OutgoingMessage first, OutgoingMessage last, int entries, int count, long bytes) {
        throw new AssertionError("no message is released here");
    }

    @Override
    public void failed(OutgoingMessage message, InetSocketAddress destination, RdsDatagram.Failure reason,
                       String why) {
        throw new AssertionError("no message fails here");
    }

    @Override
    public synchronized void zeroCopyCompleted(int cookie) {
        reported.add(cookie);
    }
}
