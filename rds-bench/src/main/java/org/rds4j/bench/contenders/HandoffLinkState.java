package org.rds4j.bench.contenders;

import java.io.IOException;

/** Whether a {@link HandoffNioContender} link is still open, and why it failed if its I/O thread failed. */
final class HandoffLinkState {
    private volatile boolean closed;
    private volatile IOException failure;

    void close() {
        closed = true;
    }

    boolean closed() {
        return closed;
    }

    void fail(IOException e) {
        if (failure == null) {
            failure = e;
        }
        closed = true;
    }

    /** Throws if the link failed or closed: every wait checks this, which bounds it. */
    void check() throws IOException {
        if (closed) {
            IOException f = failure;
            throw f != null ? new IOException("the link's I/O thread failed: " + f.getMessage(), f)
                    : new IOException("the link is closed");
        }
    }
}
