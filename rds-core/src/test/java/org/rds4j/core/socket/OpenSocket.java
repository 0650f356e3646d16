package org.rds4j.core.socket;

import java.util.concurrent.atomic.AtomicInteger;
import org.rds4j.core.spi.OffHeapMemory;

/**
 * A receive queue's socket for tests of the queue alone: it stays open, its port never congests (the queue's budget
 * is far above what the tests deliver), its messages are small (heap buffers only), and its count of sends begun is
 * the test's to move.
 */
final class OpenSocket implements ReceiveQueue.Owner {
    /** The socket's sends begun, as {@link #sends()} reports them. */
    final AtomicInteger sends = new AtomicInteger();

    @Override
    public void checkOpen() {
    }

    @Override
    public boolean isClosed() {
        return false;
    }

    @Override
    public boolean markOwnPort(boolean congested) {
        return false;
    }

    @Override
    public void ownPortCleared() {
    }

    @Override
    public OffHeapMemory offHeap() {
        return null;
    }

    @Override
    public int sends() {
        return sends.get();
    }
}
