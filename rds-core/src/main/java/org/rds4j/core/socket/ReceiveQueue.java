package org.rds4j.core.socket;

import org.rds4j.core.stack.RdsCounters;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.LongSupplier;
import org.rds4j.EintrException;
import org.rds4j.RdsDatagram;
import org.rds4j.RdsMessageInfo;
import org.rds4j.core.stack.RdsCounters.Counter;
import org.rds4j.core.path.Arrival;
import org.rds4j.core.path.ConnectionPath;
import org.rds4j.core.path.PeerReceiveBudget;
import org.rds4j.core.path.PostedBuffer;
import org.rds4j.core.util.GrowingPool;
import org.rds4j.core.util.SpinningLock;
import org.rds4j.core.util.WaitQueue;

/**
 * A socket's receive side: arrivals queued for {@code receive()}, the notifications returned ahead of them, the
 * receive budget and the congestion state of the socket's port. The kernel's {@code rs_recv_queue} with
 * {@code rs_rcv_bytes} against half of {@code SO_RCVBUF}.
 *
 * <p>I/O threads deliver a read's arrivals in one batch: one lock and at most one wake-up per batch. Readers take
 * one arrival at a time under the lock and copy it out after releasing it, then give the arrival (and its buffer)
 * back to the pool. A run (a read's consecutive small messages in one arrival, {@link Arrival}) is taken a message
 * at a time, each copied out under the lock (at most {@link Arrival#RUN_ENTRY_MAX} bytes), and the reader that takes
 * its last message gives it back.
 */
public final class ReceiveQueue {
    /** Arrivals kept for reuse per socket: the pool grows to what the socket has queued at most. */
    private static final int POOL_INITIAL = 64;
    private static final int POOL_MAX = 1 << 16;
    private static final VarHandle AVAILABLE;

    static {
        try {
            AVAILABLE = MethodHandles.lookup().findVarHandle(ReceiveQueue.class, "available", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final Owner socket;
    private final ReentrantLock lock = new SpinningLock();
    private final WaitQueue readable = new WaitQueue();
    private final GrowingPool<Arrival> pool;
    private final PostedBuffer posted = new PostedBuffer();

    // Guarded by lock.
    private Arrival head;
    private Arrival tail;
    private final ArrayDeque<RdsDatagram> failures = new ArrayDeque<>();
    private long monitorNotify;
    private final CompletionCookies cookies = new CompletionCookies();
    private long queuedBytes;
    private boolean congested;
    private boolean closed;
    private int waiting;
    /**
     * Items a reader could take now (messages and notifications). Written under the lock with a release store, read
     * by busy-poll spinners without it: a volatile store would add a full fence to every message a reader takes,
     * and only a spinner, which reads it in a loop, needs to see it without the lock.
     */
    private int available;
    /** What readers took, counted under the lock: this socket's share of the stack's counters. */
    private final ReceiveCounts counts;
    private volatile int rcvbuf;
    /** Busy-poll: a waiting reader spins on {@link #available} instead of parking. */
    private final boolean busyPoll;
    /** Otherwise: whether a reader waiting for a reply yields before it parks. Guarded by lock. */
    private final ReplySpin replySpin;
    /** Times the waits for a reply. */
    private final LongSupplier clock;

    /** The socket whose queue this is: what the queue asks of it. */
    interface Owner {
        /** Throws if the socket closed. */
        void checkOpen() throws org.rds4j.EbadfException;

        /** Whether the socket closed. */
        boolean isClosed();

        /** Sets or clears the socket's port in the local congestion map, under the queue's lock; whether it changed. */
        boolean markOwnPort(boolean congested);

        /** A take cleared the port's congestion: the peers are told, after the queue's lock. */
        void ownPortCleared();

        /** The stack's off-heap account, for arrivals' direct buffers. */
        org.rds4j.core.spi.OffHeapMemory offHeap();

        /**
         * How many sends the socket has begun, a count that wraps and is only compared with an earlier value; read
         * without synchronisation, as a hint ({@link ReplySpin}).
         */
        default int sends() {
            return 0;
        }
    }

    ReceiveQueue(Owner socket, int rcvbuf, boolean busyPoll, long replySpinNanos, RdsCounters counters) {
        this(socket, rcvbuf, busyPoll, ReplySpin.SEVERAL_CPUS ? replySpinNanos : 0, counters, POOL_INITIAL, System::nanoTime);
    }

    /**
     * With a pool of {@code poolInitial} arrivals to start with (a model-checked test keeps it small) and the clock
     * that times waits for a reply (a test's virtual one).
     */
    ReceiveQueue(Owner socket, int rcvbuf, boolean busyPoll, long replySpinNanos, RdsCounters counters,
            int poolInitial, LongSupplier clock) {
        this.pool = new GrowingPool<>(poolInitial, POOL_MAX, Arrival::new);
        this.socket = socket;
        this.rcvbuf = rcvbuf;
        this.busyPoll = busyPoll;
        this.replySpin = new ReplySpin(busyPoll ? 0 : replySpinNanos);
        this.clock = clock;
        this.counts = new ReceiveCounts(counters);
    }

    /** Under the lock. */
    private void setAvailable(int n) {
        AVAILABLE.setRelease(this, n);
    }

    public int rcvbuf() {
        return rcvbuf;
    }

    void rcvbuf(int b) {
        this.rcvbuf = b;
    }

    // ------------------------------------------------------------------------------------------------ I/O side

    /** An arrival for {@code length} payload bytes in a buffer of at least {@code room} ({@link Arrival#prepare}). */
    Arrival claim(int length, int room) {
        Arrival a = pool.take();
        a.prepare(length, room, socket.offHeap());
        return a;
    }

    /** {@link #claim}, with the payload going into a waiting reader's posted buffer if it can (PostedBuffer). */
    Arrival claimDirect(int length) {
        Arrival a = claim(length, 0);
        if (length >= PostedBuffer.MIN && posted.posted()) {
            lock.lock();
            try {
                // Only what nothing is queued ahead of may go to the reader at once (nor anything of the same read
                // still gathered for this socket: PathConnection#payloadBuffer asks for no direct claim then).
                if (!closed && nothingQueued()) {
                    posted.claim(a, length);
                }
            } finally {
                lock.unlock();
            }
        }
        return a;
    }

    /** A claimed arrival that will not be delivered (a duplicate, a connection gone): a posted buffer is given back. */
    void abandon(Arrival a) {
        if (a.lent()) {
            lock.lock();
            try {
                posted.unclaim(a);
            } finally {
                lock.unlock();
            }
        }
        recycle(a);
    }

    /**
     * Gives an arrival back to the pool with its buffer (the pool never holds more than the queue once did). Its
     * source and budget stay: the next message mostly has the same ones, which are then not stored again
     * ({@link Arrival#set}).
     */
    void recycle(Arrival a) {
        a.recycled();
        pool.offer(a);
    }

    /**
     * Queues a batch; returns whether the port's congestion bit changed (the caller then sends map updates), or
     * {@code false} with nothing queued if the socket closed.
     *
     * @return -1 closed (dropped), 1 the port became congested, 0 otherwise
     */
    int deliver(Arrival first, Arrival last, int count, long bytes) {
        boolean mapChanged = false;
        Thread wake = null;
        lock.lock();
        try {
            if (first.lent()) {
                // Decoded into the waiting reader's posted buffer: whole now, and only that reader may take it.
                if (closed) {
                    posted.unclaim(first);
                    return -1;
                }
                posted.fill();
                wake = readable.signalAfterUnlock(posted.reader());
                return 0;
            }
            if (closed) {
                return -1;
            }
            long budget = rcvbuf / 2;
            PeerReceiveBudget peer = first.budget();
            if (queuedBytes + bytes > budget && peer != null) {
                // Charged before a reader can see the batch, so the peer's count never runs below what is queued
                // (an atomic add: the budget takes no lock here).
                peer.charge(Arrival.markExcess(first, queuedBytes, budget));
            }
            if (tail == null) {
                head = first;
            } else {
                tail.next(first);
            }
            tail = last;
            queuedBytes += bytes;
            setAvailable(available + count);
            if (!congested && queuedBytes > rcvbuf / 2) {
                congested = true;
                mapChanged = socket.markOwnPort(true);
            }
            if (waiting > 0) {
                wake = count > 1 ? readable.signalAllAfterUnlock() : readable.signalAfterUnlock();
            }
        } finally {
            lock.unlock();
            if (wake != null) {
                LockSupport.unpark(wake);            // after the lock: the reader wakes into a free lock
            }
        }
        return mapChanged ? 1 : 0;
    }

    /** A send failed and the socket reports failures (RDS_RECVERR). */
    void addFailure(RdsDatagram d) {
        lock.lock();
        try {
            if (!closed) {
                failures.addLast(d);
                setAvailable(available + 1);
                readable.signal();
            }
        } finally {
            lock.unlock();
        }
    }

    /** Monitored ports fired (RDS_CONG_MONITOR). */
    void addCongestionNotify(long mask) {
        lock.lock();
        try {
            if (monitorNotify == 0) {
                setAvailable(available + 1);
            }
            monitorNotify |= mask;
            readable.signal();
        } finally {
            lock.unlock();
        }
    }

    /** A zero-copy message's buffer is free again: its cookie is reported by the next receive. */
    void addZeroCopyCompletion(int cookie) {
        lock.lock();
        try {
            if (closed) {
                return;
            }
            if (cookies.isEmpty()) {
                setAvailable(available + 1);
            }
            cookies.add(cookie);
            readable.signal();
        } finally {
            lock.unlock();
        }
    }

    /** Up to eight pending cookies as one notification (the kernel coalesces them the same way). Under the lock. */
    private Arrival takeCookies(boolean peek) {
        int[] batch = cookies.take(peek);
        if (!peek && cookies.isEmpty()) {
            setAvailable(available - 1);
        }
        return Arrival.notification(RdsDatagram.zeroCopyCompletion(batch, System.nanoTime()));
    }

    void clearCongestionNotify() {
        lock.lock();
        try {
            if (monitorNotify != 0) {
                setAvailable(available - 1);
            }
            monitorNotify = 0;
        } finally {
            lock.unlock();
        }
    }

    // ------------------------------------------------------------------------------------------------ reader side

    /**
     * The next item: a send failure, then a congestion notification, then zero-copy completions, then a message,
     * as the kernel's recvmsg orders them; {@code null} if none came within the timeout. With {@code peek} a message
     * stays queued (do not recycle it). If taking the message cleared the port's congestion, the socket sends the
     * map update once the lock is released. A non-null {@code dst} ({@link PostedBuffer#eligible}) is lent while the
     * caller waits; a message decoded into it comes back {@link Arrival#inPlace()}. A message of a run, and any
     * peeked message, is copied out here, under the lock: into {@code into} with {@code info} set
     * ({@link Arrival#COPIED} comes back), or, with {@code info} null, into a {@link Arrival#detached()} arrival of
     * its own.
     */
    Arrival take(long timeoutNanos, boolean peek, ByteBuffer dst, ByteBuffer into, RdsMessageInfo info)
            throws java.io.IOException {
        boolean cleared = false;
        Arrival dequeued = null;
        Arrival finishedRun = null;
        Thread me = dst != null ? Thread.currentThread() : null;
        boolean replyWait = false;                  // this take waits for a reply (ReplySpin), since replyWaitStart
        long replyWaitStart = 0;
        lock.lock();
        try {
            // The clock is read only once the reader has to wait: a reader that keeps up never reads it (it was
            // a tenth of a busy reader's time in a profile of ./rds4j bench).
            long deadline = Long.MAX_VALUE;
            boolean waited = false;
            while (true) {
                if (me != null && posted.reader() == me) {
                    if (posted.filled() && nothingQueued()) {
                        Arrival filled = posted.takeFilled();   // decoded into the caller's buffer: nothing to copy
                        counts.taken(filled.length());
                        return filled;
                    }
                    if (!nothingQueued()) {
                        reclaim(me);                 // something else goes first: the buffer is the caller's again
                    }
                }
                if (!failures.isEmpty()) {
                    if (!peek) {
                        setAvailable(available - 1);
                    }
                    return Arrival.notification(peek ? failures.peekFirst() : failures.pollFirst());
                }
                if (monitorNotify != 0) {
                    Arrival n = Arrival.notification(RdsDatagram.congestionUpdate(monitorNotify, System.nanoTime()));
                    if (!peek) {
                        monitorNotify = 0;
                        setAvailable(available - 1);
                    }
                    return n;
                }
                if (!cookies.isEmpty()) {
                    return takeCookies(peek);
                }
                Arrival a = head;
                if (a != null) {
                    Arrival taken = a;
                    int length = a.nextLength();
                    if (a.isRun() || peek) {
                        taken = a.copyNext(into, info);     // under the lock: see Arrival#copyNext
                    }
                    if (!peek) {
                        if (!a.isRun() || a.runStep()) {
                            head = a.next();
                            if (head == null) {
                                tail = null;
                            }
                            a.next(null);
                            dequeued = a;
                            finishedRun = a.isRun() ? a : null;
                        }
                        queuedBytes -= length;
                        setAvailable(available - 1);
                        counts.taken(length);
                        if (congested && queuedBytes < rcvbuf / 4) {
                            congested = false;
                            cleared = socket.markOwnPort(false);
                        }
                    }
                    return taken;
                }
                socket.checkOpen();
                if (timeoutNanos <= 0) {
                    return null;
                }
                boolean firstWait = !waited;
                if (firstWait && timeoutNanos != Long.MAX_VALUE) {
                    deadline = clock.getAsLong() + timeoutNanos;
                }
                waited = true;
                long left = deadline == Long.MAX_VALUE ? Long.MAX_VALUE : deadline - clock.getAsLong();
                if (left <= 0) {
                    return null;
                }
                if (busyPoll) {
                    spinUnlocked(deadline, true);
                    continue;
                }
                if (me != null && posted.idle()) {
                    posted.post(dst, me);            // the next large message may be decoded straight into it
                }
                if (firstWait && replySpin.awaitsReply(socket.sends())) {
                    replyWait = true;
                    replyWaitStart = clock.getAsLong();
                    if (replySpin.worthSpinning()) {
                        long until = replyWaitStart + replySpin.window();
                        if (deadline != Long.MAX_VALUE && deadline - until < 0) {
                            until = deadline;
                        }
                        // Under tcp.callerIo a reader that awaits a reply reads the path's socket itself while it
                        // yields, whether one request or a window of them is out (decisions 0033 and 0046): it turns
                        // time it would give away into reads the I/O thread no longer makes. One whose buffer is lent
                        // leaves a large reply to the I/O thread, which reads it in place.
                        spinUnlocked(until, me == null);
                        continue;
                    }
                }
                waiting++;
                try {
                    readable.await(lock, left);
                } finally {
                    waiting--;
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new EintrException("interrupted while waiting for a message");
        } finally {
            if (me != null) {
                reclaim(me);                        // whatever ends the wait: never return with the buffer lent
            }
            if (replyWait) {
                replySpin.replied(clock.getAsLong() - replyWaitStart);  // the reply, or the end of waiting for it
            }
            lock.unlock();
            if (dequeued != null) {
                dequeued.dequeued();                // the peer's bound, after the lock: it may resume reading
            }
            if (finishedRun != null) {
                recycle(finishedRun);               // all its messages are copied out: nobody refers to it now
            }
            if (cleared) {
                socket.ownPortCleared();
            }
        }
    }

    private boolean nothingQueued() {
        return head == null && failures.isEmpty() && monitorNotify == 0 && cookies.isEmpty();
    }

    /**
     * Under the lock: takes this reader's posted buffer back. A message half decoded into it is copied into its
     * arrival, where the I/O thread carries on; a whole one goes into its arrival and to the head of the queue (it
     * came before anything its connection delivered since). While the I/O thread is inside a read that writes into
     * the buffer, this waits without the lock, which that thread needs to complete the message: one read at most.
     */
    private void reclaim(Thread me) {
        while (posted.reader() == me) {
            if (posted.writing()) {
                lock.unlock();
                try {
                    Thread.yield();
                } finally {
                    lock.lock();
                }
                continue;
            }
            Arrival whole = posted.revoke();
            if (whole != null && !closed) {
                whole.next(head);
                head = whole;
                if (tail == null) {
                    tail = whole;
                }
                queuedBytes += whole.length();
                setAvailable(available + 1);
                readable.signal();                  // another reader may be waiting for it
            }
        }
    }

    /** Under caller I/O, the path that delivered here last: a busy-polling reader polls its socket while it waits. */
    private volatile ConnectionPath deliveredBy;

    /**
     * Whether nothing waits to be taken: a hint, read without the lock (a socket with messages still queued will send
     * more replies soon, which batch better on the I/O thread than each in its own pass).
     */
    boolean nothingToTake() {
        return (int) AVAILABLE.getOpaque(this) == 0;
    }

    /** Under caller I/O, before each delivery, on the delivering path's holder; a plain store unless it changed. */
    void deliveredBy(ConnectionPath path) {
        ConnectionPath old = deliveredBy;
        if (old != path) {
            deliveredBy = path;
            if (old != null) {
                old.releaseReading();               // its readers moved on: its socket is the I/O thread's again
            }
        }
    }

    /**
     * Called and returning under the lock: polls without it until something can be taken, {@code until} passes
     * ({@code Long.MAX_VALUE}: never) or the socket closes, yielding the core between checks. Busy-poll waits so for
     * ever, a default-mode reader waiting for a reply ({@link ReplySpin}) for its window. The thread never parks, and
     * on a machine with fewer cores than polling threads the threads with work still run first (a pure spin of 1,000
     * turns before the first yield made a 64-byte round trip on 2 cores take 86 us instead of 30:
     * {@code BackoffSelectStrategy} says why). A reader's posted buffer stays lent meanwhile (only outside busy-poll),
     * so a large reply still goes straight into it; its filling is watched too, as it does not count in
     * {@link #available}. With {@code pollPath}, under caller I/O, it also reads the socket of the path that delivered
     * to it last between checks.
     */
    private void spinUnlocked(long until, boolean pollPath) throws InterruptedException {
        lock.unlock();
        try {
            while ((int) AVAILABLE.getOpaque(this) == 0 && !posted.filled() && !socket.isClosed()) {
                if (Thread.interrupted()) {
                    throw new InterruptedException();
                }
                if (until != Long.MAX_VALUE && clock.getAsLong() - until >= 0) {
                    return;
                }
                ConnectionPath from = pollPath ? deliveredBy : null;
                if (from != null) {
                    from.pollAsReader();            // caller I/O: reads the socket here, and may deliver to us
                    if ((int) AVAILABLE.getOpaque(this) != 0) {
                        return;
                    }
                }
                Thread.yield();
            }
        } finally {
            lock.lock();
        }
    }

    /**
     * For inspection: {messages queued unread, their bytes, 1 if the port is marked congested}. Under the lock, a
     * leaf, held for three reads: notifications are counted in {@link #available} and taken out again here.
     */
    public long[] census() {
        lock.lock();
        try {
            int notifications = failures.size() + (monitorNotify != 0 ? 1 : 0) + (cookies.isEmpty() ? 0 : 1);
            return new long[] {available - notifications, queuedBytes, congested ? 1 : 0};
        } finally {
            lock.unlock();
        }
    }

    boolean isReadable() {
        lock.lock();
        try {
            return head != null || !failures.isEmpty() || monitorNotify != 0 || !cookies.isEmpty();
        } finally {
            lock.unlock();
        }
    }

    /** Closes: drops what is queued and wakes readers. Returns whether the port's congestion bit cleared. */
    boolean close() {
        Arrival dropped = null;
        lock.lock();
        try {
            dropped = head;
            closed = true;
            counts.fold();
            boolean mapChanged = false;
            if (congested) {
                congested = false;
                mapChanged = socket.markOwnPort(false);
            }
            head = null;
            tail = null;
            queuedBytes = 0;
            failures.clear();
            cookies.clear();
            setAvailable(0);
            readable.signalAll();
            return mapChanged;
        } finally {
            lock.unlock();
            // What nobody will read no longer counts against its peer's bound.
            for (Arrival a = dropped; a != null; a = a.next()) {
                a.dequeued();
            }
        }
    }

    /** Counts a delivered batch (after the lock: counters are shared). */
    void counted(RdsCounters counters, int count, long bytes) {
        counters.add(Counter.RECV_QUEUED, count);
        counters.add(Counter.RECV_BYTES_ADDED_TO_SOCK, bytes);
    }
}
