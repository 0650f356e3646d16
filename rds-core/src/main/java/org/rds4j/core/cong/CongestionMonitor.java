package org.rds4j.core.cong;

import java.io.IOException;
import java.util.concurrent.TimeUnit;
import org.rds4j.EintrException;
import org.rds4j.EnobufsException;
import org.rds4j.EtimedoutException;

/**
 * One socket's side of congestion: waiting for, or refusing to send to, a congested destination port, and the
 * congestion monitor ({@code RDS_CONG_MONITOR}): the ports the socket was refused on are remembered in a 64-bit mask
 * ({@code port % 64}, as the kernel's {@code rs_cong_mask}), and when a peer's map changes every remembered bit
 * fires ({@code rs_cong_notify}), reported ahead of data by {@code receive()}.
 *
 * <p>Thread-safe: the mask is guarded by this object's monitor, taken inside the peer map's monitor (never the other
 * way round).
 */
public final class CongestionMonitor {
    /** How a refused or blocked send is reported, and whether the socket is still open. */
    public interface Owner {
        /**
         * Throws if the socket closed meanwhile (EBADF).
         *
         * @throws IOException if the socket is closed
         */
        void checkOpen() throws IOException;

        /** A non-blocking send was refused (ENOBUFS); count it. */
        void refused();

        /** A blocking send waits for the port; count it. */
        void blocked();
    }

    private volatile boolean enabled;
    private long mask;

    /**
     * Whether the congestion monitor (RDS_CONG_MONITOR) is on for this socket.
     *
     * @return true if refused ports are remembered and reported when they may have cleared
     */
    public boolean enabled() {
        return enabled;
    }

    /**
     * RDS_CONG_MONITOR: turning it off forgets the remembered ports.
     *
     * @param on whether to monitor
     */
    public synchronized void enabled(boolean on) {
        enabled = on;
        if (!on) {
            mask = 0;
        }
    }

    /**
     * The monitor's mask, for inspection.
     *
     * @return bit {@code port % 64} for each destination port a send was refused on since the last notification
     */
    public synchronized long mask() {
        return mask;
    }

    /**
     * Returns when {@code port} of the peer is not congested: at once if it is clear, after waiting for it to clear
     * if {@code blocking} (at most {@code timeoutNanos}, 0 for no bound; a close ends the wait), or by throwing
     * ENOBUFS otherwise.
     *
     * <p>The kernel's wait here (net/rds/cong.c, {@code rds_cong_wait}) has no timeout: only a signal ends it. rds4j
     * bounds it by the socket's {@code SO_SNDTIMEO} as well, so that a sender whose receiver never reads (the same
     * thread, say) fails instead of hanging; with {@code SO_SNDTIMEO} unset (0) it waits as the kernel does.
     *
     * @param peerMap the congestion map of the destination address
     * @param port the destination RDS port, 0 to 65535
     * @param blocking whether the send may wait
     * @param timeoutNanos the longest wait, {@code SO_SNDTIMEO}; 0 waits until the port clears
     * @param owner the sending socket, told of refusals and waits
     * @throws IOException {@link org.rds4j.EnobufsException} if the port is congested and {@code blocking} is
     *         false; {@link org.rds4j.EtimedoutException} if it stayed congested for {@code timeoutNanos};
     *         {@link org.rds4j.EintrException} if the wait was interrupted; or the socket's own exception if it
     *         closed meanwhile
     */
    public void awaitUncongested(CongestionMap peerMap, int port, boolean blocking, long timeoutNanos, Owner owner)
            throws IOException {
        if (!peerMap.isCongested(port)) {
            return;
        }
        if (!blocking) {
            // As the kernel: add the port to the mask, then test once more. Both happen under the map's monitor,
            // which a map update holds while it replaces the map and fires the masks, so exactly one of two things
            // is true: the update came after the bit (and fires it), or before (and the re-test sees it, sending if
            // the port cleared). No notification is lost, and none fires for the map that refused us.
            synchronized (peerMap) {
                boolean monitoring;
                synchronized (this) {
                    monitoring = enabled;
                    if (monitoring) {
                        mask |= 1L << (port % 64);
                    }
                }
                if (monitoring && !peerMap.isCongested(port)) {
                    return;
                }
            }
            owner.refused();
            throw new EnobufsException("port " + port + " of the destination is congested: its receiver is behind;"
                    + " retry later or send blocking");
        }
        owner.blocked();
        long start = System.nanoTime();
        try {
            // Wake now and then to notice a close; SO_SNDTIMEO, when set, bounds the whole wait.
            long slice = TimeUnit.MILLISECONDS.toNanos(100);
            while (true) {
                long left = timeoutNanos == 0 ? slice : timeoutNanos - (System.nanoTime() - start);
                if (left <= 0) {
                    owner.checkOpen();
                    throw new EtimedoutException("port " + port + " of the destination stayed congested for"
                            + " SO_SNDTIMEO (" + TimeUnit.NANOSECONDS.toMillis(timeoutNanos) + " ms): its receiver"
                            + " is not reading; nothing was sent. Read on another thread, send non-blocking and"
                            + " wait for RDS_CONG_MONITOR's notification, or raise the receiver's SO_RCVBUF");
                }
                if (peerMap.awaitClear(port, Math.min(slice, left))) {
                    break;
                }
                owner.checkOpen();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new EintrException("interrupted while waiting for a congested port; nothing was sent");
        }
        owner.checkOpen();
    }

    /**
     * A peer's map changed: the remembered ports fire, and are forgotten.
     *
     * @return the fired ports, bit {@code port % 64} for each; 0 if none or monitoring is off
     */
    public synchronized long peerMapChanged() {
        if (!enabled || mask == 0) {
            return 0;
        }
        long fired = mask;
        mask = 0;
        return fired;
    }
}
