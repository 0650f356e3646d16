package org.rds4j.core.socket;

import org.rds4j.core.stack.CoreStack;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import org.rds4j.EinvalException;
import org.rds4j.RdsSelector;
import org.rds4j.RdsSocket;
import org.rds4j.core.util.SpinningLock;
import org.rds4j.core.util.WaitQueue;

/**
 * {@link RdsSelector} over {@link CoreSocket}s. A socket signals its registrations when it may have become ready
 * (a message queued, send-buffer space released, closed); a signalled registration goes on the ready queue once, and
 * {@link #select} checks its real readiness before reporting it. Sockets that are still ready after the handler go
 * back on the queue: readiness is level-triggered, as {@code poll} is.
 *
 * <p>Cost on the message path: one volatile read per message for a socket nobody selects on; for a registered
 * socket, one flag test, and a lock only when the registration was not already queued. The selecting thread waits
 * in a {@link WaitQueue} (no allocation per wait) and is unparked after the lock is released.
 */
public final class CoreSelector implements RdsSelector {
    private final CoreStack stack;
    private final Map<CoreSocket, Registration> registrations = new ConcurrentHashMap<>();
    private final ReentrantLock lock = new SpinningLock();
    private final WaitQueue signalled = new WaitQueue();
    private final ArrayDeque<Registration> ready = new ArrayDeque<>();
    private final List<Registration> batch = new ArrayList<>();
    private boolean woken;
    private volatile boolean closed;

    public CoreSelector(CoreStack stack) {
        this.stack = stack;
    }

    /** One socket's registration with this selector. */
    final class Registration {
        final CoreSocket socket;
        volatile int interest;
        private boolean queued;                      // guarded by the selector's lock

        Registration(CoreSocket socket, int interest) {
            this.socket = socket;
            this.interest = interest;
        }

        /** The socket may have become ready: queue it for the next select, once. */
        void signal() {
            if (closed) {
                return;
            }
            Thread wake = null;
            lock.lock();
            try {
                if (!queued) {
                    queued = true;
                    ready.addLast(this);
                    wake = signalled.signalAfterUnlock();
                }
            } finally {
                lock.unlock();
            }
            if (wake != null) {
                LockSupport.unpark(wake);            // after the lock: the selecting thread wakes into a free lock
            }
        }
    }

    @Override
    public void register(RdsSocket socket, int interestOps) throws IOException {
        Objects.requireNonNull(socket, "socket is null: pass a socket of this selector's stack");
        if (!(socket instanceof CoreSocket) || socket.stack() != stack) {
            throw new EinvalException("the socket belongs to another stack than this selector's");
        }
        if ((interestOps & ~(OP_READ | OP_WRITE)) != 0) {
            throw new EinvalException("unknown operations 0x" + Integer.toHexString(interestOps)
                    + "; use OP_READ and OP_WRITE");
        }
        CoreSocket s = (CoreSocket) socket;
        if (interestOps == 0) {
            Registration r = registrations.remove(s);
            if (r != null) {
                s.removeRegistration(r);
            }
            return;
        }
        Registration r = registrations.computeIfAbsent(s, k -> {
            Registration created = new Registration(k, interestOps);
            k.addRegistration(created);
            return created;
        });
        r.interest = interestOps;
        r.signal();                                  // it may be ready already
    }

    @Override
    public int select(Duration timeout, ReadyHandler handler) throws IOException {
        Objects.requireNonNull(timeout, "timeout is null: pass the longest wait, such as Duration.ofSeconds(1)");
        Objects.requireNonNull(handler, "handler is null: pass a ReadyHandler to call for each ready socket");
        long deadline = System.nanoTime() + timeout.toNanos();
        batch.clear();
        lock.lock();
        try {
            while (ready.isEmpty() && !woken && !closed) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    break;
                }
                signalled.await(lock, left);
            }
            woken = false;
            Registration r;
            while ((r = ready.pollFirst()) != null) {
                r.queued = false;
                batch.add(r);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            lock.unlock();
        }
        int reported = 0;
        for (Registration r : batch) {
            if (registrations.get(r.socket) != r) {
                continue;                            // deregistered meanwhile
            }
            int ops = readyOps(r);
            if (ops != 0) {
                reported++;
                handler.ready(r.socket, ops);
                if (readyOps(r) != 0) {
                    r.signal();                      // still ready: level-triggered
                }
            }
        }
        batch.clear();
        return reported;
    }

    private static int readyOps(Registration r) {
        CoreSocket s = r.socket;
        int interest = r.interest;
        if (!s.isOpen()) {
            return interest;
        }
        int ops = 0;
        if ((interest & OP_READ) != 0 && s.isReadable()) {
            ops |= OP_READ;
        }
        if ((interest & OP_WRITE) != 0 && s.isWritable()) {
            ops |= OP_WRITE;
        }
        return ops;
    }

    @Override
    public void wakeup() {
        Thread wake;
        lock.lock();
        try {
            woken = true;
            wake = signalled.signalAfterUnlock();
        } finally {
            lock.unlock();
        }
        if (wake != null) {
            LockSupport.unpark(wake);
        }
    }

    @Override
    public void close() {
        closed = true;
        for (Registration r : registrations.values()) {
            r.socket.removeRegistration(r);
        }
        registrations.clear();
        lock.lock();
        try {
            ready.clear();
            signalled.signalAll();
        } finally {
            lock.unlock();
        }
    }

}
