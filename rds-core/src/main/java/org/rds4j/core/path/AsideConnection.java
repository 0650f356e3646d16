package org.rds4j.core.path;

import java.nio.ByteBuffer;
import org.rds4j.core.spi.ConnectionHandler;
import org.rds4j.core.spi.FrameSink;
import org.rds4j.core.spi.ReadTarget;
import org.rds4j.core.spi.TransportConnection;

/**
 * A connection the peer opened when no path was free for it, kept unread until one is ({@link PathPlacement}). The
 * peer may already have sent on it, and its TCP counts what ours acknowledged as delivered: a reset would lose that,
 * so the connection waits instead, with reading stopped, and then hands every event to the path's
 * {@link PathConnection}.
 *
 * <p>Bytes can arrive while it waits although reading is stopped: a transport reads a socket to its end when the
 * peer closes or resets it. They are kept, up to {@link #EARLY_BYTES_MAX}, and go to the path first once placed.
 *
 * <p>Threads: the transport calls it on the connection's I/O thread; the placement runs on the connection's owner.
 * Under caller I/O those can differ, so everything before placement happens holding the connection
 * ({@link Connection#enter}); after it, events go straight to the path's connection, which holds it itself.
 */
final class AsideConnection implements ConnectionHandler {
    /** The most bytes kept from a waiting connection that the peer ended; more, and it is reset. */
    static final int EARLY_BYTES_MAX = 256 * 1024;

    private final Connection connection;
    final TransportConnection transport;
    /** When it was set aside, for the limit ({@link PathPlacement#ASIDE_LIMIT_NANOS}). */
    final long asideNanos;
    /** The path's connection once placed: from then on every event is its. */
    private volatile ConnectionHandler placed;
    /** Bytes that arrived while waiting, in flush mode between calls; null if none. On the owner. */
    private ByteBuffer early;
    /** Whether the transport reported the connection closed while it waited, and why. On the owner. */
    private boolean closed;
    private Throwable closeCause;
    /** Whether the placement gave up on it, or it was closed with nothing to deliver. On the owner. */
    private boolean dropped;

    AsideConnection(Connection connection, TransportConnection transport, long asideNanos) {
        this.connection = connection;
        this.transport = transport;
        this.asideNanos = asideNanos;
    }

    /** Whether it still waits for a path. On the owner. */
    boolean waiting() {
        return placed == null && !dropped;
    }

    /** Whether it was closed while waiting with nothing to deliver: it no longer waits. On the owner. */
    boolean closedEmpty() {
        return closed && (early == null || !early.hasRemaining());
    }

    /** How many bytes arrived while it waited. On the owner. */
    int earlyBytes() {
        return early == null ? 0 : early.remaining();
    }

    /**
     * A path took it: reading resumes, the bytes that came while it waited go first, and a close that came meanwhile
     * follows them. On the owner.
     *
     * @param h the path's handler for it
     */
    void place(ConnectionHandler h) {
        assert connection.ownerOnly();
        if (!closed) {
            transport.setReadable(true);     // before the early bytes: a stop they cause then wins
        }
        ByteBuffer bytes = early;
        early = null;
        placed = h;
        if (bytes != null && bytes.hasRemaining()) {
            h.onBytes(bytes);
        }
        if (closed) {
            h.onClosed(closeCause);
        }
    }

    /** The placement gave up on it (the limit, or the connection shut down): reset. On the owner. */
    void drop() {
        assert connection.ownerOnly();
        dropped = true;
        early = null;
        if (!closed) {
            transport.abort();
        }
    }

    @Override
    public void onConnected(TransportConnection c) {
        throw new IllegalStateException("a connection the peer opened cannot connect");
    }

    @Override
    public void onConnectFailed(Throwable cause) {
        throw new IllegalStateException("a connection the peer opened cannot fail to connect");
    }

    @Override
    public void onBytes(ByteBuffer data) {
        ConnectionHandler h = placed;
        if (h != null) {
            h.onBytes(data);
            return;
        }
        boolean acquired = connection.enter();
        try {
            h = placed;
            if (h != null) {
                h.onBytes(data);
            } else if (!dropped) {
                keep(data);
            } else {
                data.position(data.limit());
            }
        } finally {
            connection.exit(acquired);
        }
    }

    private void keep(ByteBuffer data) {
        int n = data.remaining();
        int held = earlyBytes();
        if (held + n > EARLY_BYTES_MAX) {
            data.position(data.limit());
            connection.placement().giveUp(this, "the peer ended it with more than " + EARLY_BYTES_MAX
                    + " bytes unread");
            return;
        }
        if (early == null || early.capacity() - held < n) {
            ByteBuffer grown = ByteBuffer.allocate(Math.min(EARLY_BYTES_MAX, Math.max(2 * (held + n), 16 * 1024)));
            if (early != null) {
                grown.put(early);
            }
            grown.flip();
            early = grown;
        }
        early.compact();
        early.put(data);
        early.flip();
    }

    @Override
    public ReadTarget readTarget() {
        ConnectionHandler h = placed;
        return h == null ? null : h.readTarget();
    }

    @Override
    public void onBytesReadInPlace(int n) {
        ConnectionHandler h = placed;
        if (h == null) {
            throw new IllegalStateException("no read target was given");
        }
        h.onBytesReadInPlace(n);
    }

    @Override
    public void transmit(FrameSink sink) {
        ConnectionHandler h = placed;
        if (h != null) {
            h.transmit(sink);
        }
    }

    @Override
    public void onTransmitted(long streamOffset) {
        ConnectionHandler h = placed;
        if (h != null) {
            h.onTransmitted(streamOffset);
        }
    }

    @Override
    public void onClosed(Throwable cause) {
        ConnectionHandler h = placed;
        if (h != null) {
            h.onClosed(cause);
            return;
        }
        boolean acquired = connection.enter();
        try {
            h = placed;
            if (h != null) {
                h.onClosed(cause);
                return;
            }
            closed = true;
            closeCause = cause;
            if (!dropped) {
                connection.placement().asideClosed(this);
            }
        } finally {
            connection.exit(acquired);
        }
    }

    @Override
    public String toString() {
        return "AsideConnection[" + transport + "]";
    }
}
