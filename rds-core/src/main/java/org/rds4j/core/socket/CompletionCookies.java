package org.rds4j.core.socket;

import org.rds4j.RdsDatagram;

/**
 * The cookies of a socket's zero-copy messages whose buffers are free again, not yet reported: a ring that grows,
 * read out up to eight at a time as one completion notification, as the kernel coalesces
 * {@code RDS_CMSG_ZCOPY_COMPLETION}. Guarded by the receive queue's lock.
 */
final class CompletionCookies {
    private int[] cookies = new int[16];
    private int head;
    private int count;

    void add(int cookie) {
        if (count == cookies.length) {
            int[] grown = new int[cookies.length * 2];
            for (int i = 0; i < count; i++) {
                grown[i] = cookies[(head + i) % cookies.length];
            }
            cookies = grown;
            head = 0;
        }
        cookies[(head + count) % cookies.length] = cookie;
        count++;
    }

    boolean isEmpty() {
        return count == 0;
    }

    /** Up to eight of the oldest cookies; with {@code peek} they stay. */
    int[] take(boolean peek) {
        int n = Math.min(count, RdsDatagram.MAX_ZEROCOPY_COOKIES);
        int[] batch = new int[n];
        for (int i = 0; i < n; i++) {
            batch[i] = cookies[(head + i) % cookies.length];
        }
        if (!peek) {
            head = (head + n) % cookies.length;
            count -= n;
        }
        return batch;
    }

    void clear() {
        head = 0;
        count = 0;
    }
}
