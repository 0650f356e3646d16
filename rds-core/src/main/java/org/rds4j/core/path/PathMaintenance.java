package org.rds4j.core.path;

import java.util.concurrent.TimeUnit;
import org.rds4j.core.spi.CallerPoll;
import org.rds4j.core.stack.RdsCounters.Counter;

/**
 * A path's periodic work while it is up, handed by the stack's timer to the connection's I/O thread
 * (docs/reliability.md): liveness (silent for half
 * the interval, ping; for all of it, drop the connection and reconnect), the acknowledgement requests of
 * {@link AckRequests}, and on path 0 the end of the wait for the peer to confirm the lanes. The path's owner runs it.
 */
final class PathMaintenance {
    /** How long path 0 waits for the peer to confirm the lanes on a new connection before the others go anyway. */
    private static final long CONFIRM_NANOS = TimeUnit.SECONDS.toNanos(2);

    private final ConnectionPath path;
    private final Connection connection;
    private final ConnectionEnvironment env;
    private final AckRequests ackRequests;
    private final Liveness liveness;
    /** When the current connection came up. */
    private long upSinceNanos;

    PathMaintenance(ConnectionPath path, AckRequests ackRequests) {
        this.path = path;
        this.connection = path.connection();
        this.env = connection.env();
        this.ackRequests = ackRequests;
        this.liveness = new Liveness(env);
        this.tick = connection.onOwner(this::run);
    }

    /** What the timer runs each period: it only hands {@link #run} to the owner (made once, allocates nothing). */
    private final Runnable tick;

    /** The path came up: silence counts from now, and the work runs every period until {@link #stop}. */
    void start(long nowNanos) {
        upSinceNanos = nowNanos;
        liveness.start(nowNanos, tick);
    }

    void stop() {
        liveness.stop();
    }

    /** Bytes arrived from the peer. */
    void heard(long nowNanos) {
        liveness.heard(nowNanos);
    }

    private void run() {
        if (path.connection().callerIo()) {
            path.pollOwned(CallerPoll.MAINTENANCE);   // hands reading back if no reader polled since the last turn
        }
        PathConnection kick = null;
        PathConnection dead = null;
        PathConnection stalled = null;
        long silent;
        long partial = 0;
        assert connection.ownerOnly();
        if (path.state() != PathState.UP) {
            return;
        }
        long now = env.nanoTime();
        silent = liveness.silentNanos(now);
        Liveness.Verdict verdict = liveness.check(now);
        PathConnection pc = path.currentConnection();
        if (pc != null && !connection.receiveBudget().isPaused()) {
            partial = pc.partialNanos(System.nanoTime());      // the I/O thread's clock, not the env's
        }
        if (partial > env.frameTimeoutNanos()) {
            stalled = pc;
            env.statistics().increment(Counter.RECV_FRAME_TIMEOUT);
        } else if (verdict == Liveness.Verdict.DEAD) {
            dead = path.currentConnection();
            env.statistics().increment(Counter.CONN_DEAD_PEER);
        } else {
            kick = ackRequests.maintain(now, verdict == Liveness.Verdict.PING);
            if (kick == null && path.acks().waiting()) {
                kick = pc;                           // a waiting ack-only is long due: its transport's pass is late
            }
        }
        if (stalled != null) {
            path.drop(stalled, "a message started " + TimeUnit.NANOSECONDS.toMillis(partial) + " ms ago has not"
                    + " completed (frameTimeout " + TimeUnit.NANOSECONDS.toMillis(env.frameTimeoutNanos()) + " ms)");
        } else if (dead != null) {
            path.drop(dead, "nothing heard from the peer for " + TimeUnit.NANOSECONDS.toMillis(silent) + " ms");
        } else if (kick != null) {
            kick.requestTransmit();
        }
        if (path.index() == 0 && !connection.multipath().confirmed()
                && env.nanoTime() - upSinceNanos > CONFIRM_NANOS && connection.multipath().confirmAnyway()) {
            connection.connectExtraPaths();          // a peer that answers no probe: the lanes it agreed stay
        }
    }
}
