package org.rds4j.core.socket;

import org.rds4j.core.stack.RdsCounters;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.LongSupplier;
import org.rds4j.EagainException;
import org.rds4j.EbadfException;
import org.rds4j.EintrException;
import org.rds4j.EtimedoutException;
import org.rds4j.core.stack.RdsCounters.Counter;
import org.rds4j.core.util.SpinningLock;
import org.rds4j.core.util.WaitQueue;

/**
 * A socket's send budget: payload bytes (and messages) queued and not yet released by the peer. The kernel's
 * {@code rs_snd_bytes} against half of {@code SO_SNDBUF}: a send is accepted while less than the budget is in use, so
 * the last one may overshoot.
 *
 * <p>The common case takes no lock: a sender reserves with one compare-and-set (bytes and messages share one word),
 * the I/O thread releases with one atomic add per acknowledgement batch. The lock and its wait queue are only for
 * senders that must wait (a full budget) and {@link #awaitEmpty}; a releaser takes it only when someone waits. The
 * waiter counts itself before it re-checks the budget and the releaser subtracts before it reads the count (both
 * volatile), so no wake-up is lost.
 *
 * <p>A blocking sender that finds the budget full first yields its core for up to the stack's
 * {@link org.rds4j.RdsStackConfig#replySpin()} window ({@link ReplySpin}) before it parks: the budget comes back with
 * the peer's acknowledgement, which the message sent at half the budget asked for, so it is usually a round trip
 * away; parked, the sender costs the I/O thread that releases the budget a wake-up. While it yields it is not counted
 * as a waiter, so a release takes no lock for it. It yields only while budget waits lately ended within a quarter of
 * the window on average ({@link #WORTH_SPINNING_SHARE}); longer ones, such as those of a stream of small messages, or a
 * slow or congested peer's, make senders park at once (decisions 0028 and 0030). A wait ends when the budget came
 * back, also for a sender that parked, whose wake-up comes later (decision 0035).
 */
public final class SendBuffer {
    /**
     * Where the message count starts in {@link #queued}: below it the bytes, which stay under the budget plus one
     * message (a budget is at most an {@code int}, a message at most 1 MiB), so 36 bits hold them.
     */
    private static final int MESSAGE_SHIFT = 36;
    private static final long BYTES_MASK = (1L << MESSAGE_SHIFT) - 1;
    private static final long ONE_MESSAGE = 1L << MESSAGE_SHIFT;
    /**
     * The most messages a socket may have queued: 2^27 - 1, so the count never reaches the sign bit. Zero-length
     * messages take no budget, so only this bounds them; a sender that finds it reached waits as for a full budget
     * (about 134 million messages, far more than a heap holds).
     */
    static final long MAX_MESSAGES = (1L << (63 - MESSAGE_SHIFT)) - 1;

    /**
     * Bytes and messages queued, in one word: the low {@link #MESSAGE_SHIFT} bits the bytes, the rest the messages.
     * One compare-and-set takes room for both; as two atomics they were two locked instructions per send.
     */
    private final AtomicLong queued = new AtomicLong();
    private final ReentrantLock lock = new SpinningLock();
    private final WaitQueue changed = new WaitQueue();
    private final RdsCounters counters;
    private volatile int waiters;
    private volatile long budget;
    /**
     * How long one wait of a sender that waits for ever lasts before it looks again: a safety net, not how it learns
     * of room (a release wakes it). The model-checked test waits for ever, so that the net cannot hide a lost wake-up.
     */
    private final long waitSliceNanos;
    /**
     * A sender yields for the budget only while budget waits average under the window divided by this. A stream of
     * 64-byte messages waits 50 to 100 µs at a time against the default 200 µs window: yielding through such waits
     * kept the unpinned 64 B rate 15 to 30 % below parking's, while 8 KiB's shorter waits still gain from it
     * (decision 0030).
     */
    static final int WORTH_SPINNING_SHARE = 4;

    /** How long a sender waiting for budget yields before it parks, and whether it still pays; under the lock. */
    private final ReplySpin spin;
    /** Times budget waits (a test's virtual clock). */
    private final LongSupplier clock;
    /**
     * When a release last found senders waiting and woke them (the clock's): where a parked sender's budget wait
     * ended, as opposed to when it ran again. Written only on that path, and only with a window (waits are timed
     * then), so a release nobody waits for costs nothing.
     */
    private volatile long releasedToWaiters;

    /** Whose budget this is: a socket, which a waiting sender checks is still open. */
    interface Owner {
        /** Throws if the socket closed. */
        void checkOpen() throws EbadfException;

        /** Whether a blocking sender waiting for budget yields until there is room instead of parking: busy-poll. */
        default boolean pollsForBudget() {
            return false;
        }

        /**
         * Between a busy-polling budget waiter's checks: reads the acknowledgements in this thread if callers read the
         * socket of the path its messages take (caller I/O).
         */
        default void pollForBudget() {
        }
    }

    /** A budget whose waiting senders park at once. */
    SendBuffer(RdsCounters counters, long budget) {
        this(counters, budget, 0);
    }

    /**
     * @param spinNanos how long a blocking sender that finds the budget full yields before it parks (the stack's
     *     {@code replySpin}); 0 parks at once, and so does any value with one processor
     */
    SendBuffer(RdsCounters counters, long budget, long spinNanos) {
        this(counters, budget, TimeUnit.MILLISECONDS.toNanos(100), ReplySpin.SEVERAL_CPUS ? spinNanos : 0,
                System::nanoTime);
    }

    /** With the safety net's slice ({@code Long.MAX_VALUE}: none) and the clock that times budget waits. */
    SendBuffer(RdsCounters counters, long budget, long waitSliceNanos, long spinNanos, LongSupplier clock) {
        this.counters = counters;
        this.budget = budget;
        this.waitSliceNanos = waitSliceNanos;
        this.spin = new ReplySpin(spinNanos, spinNanos / WORTH_SPINNING_SHARE);
        this.clock = clock;
    }

    public long budget() {
        return budget;
    }

    /** A new SO_SNDBUF: wakes waiting senders, which may now fit. */
    void budget(long b) {
        this.budget = b;
        wakeAll();
    }

    public long queuedBytes() {
        return queued.get() & BYTES_MASK;
    }

    public long queuedMessages() {
        return queued.get() >>> MESSAGE_SHIFT;
    }

    /** Whether {@code state} leaves room for one more message under {@code budget}. */
    private static boolean room(long state, long budget) {
        return (state & BYTES_MASK) < budget && (state >>> MESSAGE_SHIFT) < MAX_MESSAGES;
    }

    boolean hasRoom() {
        return room(queued.get(), budget);
    }

    /**
     * Takes room for a message of {@code len} bytes, waiting for it if {@code blocking} (up to {@code timeoutNanos},
     * 0 for ever).
     *
     * @return whether the buffer was at least half full: the message then asks for a prompt acknowledgement, as the
     *         kernel marks it ACK_REQUIRED
     */
    boolean reserve(int len, boolean blocking, long timeoutNanos, Owner socket) throws java.io.IOException {
        int ask = tryReserve(len);
        return ask >= 0 ? ask > 0 : reserveSlow(len, blocking, timeoutNanos, socket);
    }

    /**
     * Takes room for a message of {@code len} bytes if there is some now; never waits. A compare-and-set lost to
     * another sender or a release is tried again while there is room, so -1 means the budget was full, not that
     * another thread moved it meanwhile (SendBufferLincheckTest found such a spurious refusal).
     *
     * @return -1 if there is no room (nothing taken); else 1 if the budget was at least half full (ask for a prompt
     *         acknowledgement, as {@link #reserve} says), 0 if not
     */
    int tryReserve(int len) {
        long b = budget;
        for (long s = queued.get(); room(s, b); s = queued.get()) {
            if (queued.compareAndSet(s, s + ONE_MESSAGE + len)) {
                return (s & BYTES_MASK) >= b / 2 ? 1 : 0;
            }
        }
        return -1;
    }

    private boolean reserveSlow(int len, boolean blocking, long timeoutNanos, Owner socket)
            throws java.io.IOException {
        long deadline = timeoutNanos == 0 ? Long.MAX_VALUE : System.nanoTime() + timeoutNanos;
        boolean counted = false;
        boolean timed = false;                      // a blocking wait with a window: timed from waitStart (clock's)
        boolean parked = false;
        long waitStart = 0;
        lock.lock();
        waiters++;
        try {
            while (true) {
                socket.checkOpen();
                long b = budget;
                long s = queued.get();
                long q = s & BYTES_MASK;
                if (room(s, b)) {
                    if (queued.compareAndSet(s, s + ONE_MESSAGE + len)) {
                        return q >= b / 2;
                    }
                    continue;
                }
                if (!counted) {
                    counters.increment(Counter.SEND_QUEUE_FULL);
                    counted = true;
                }
                if (!blocking) {
                    if (q < b) {
                        throw new EagainException("the socket has " + MAX_MESSAGES + " messages queued, the most it"
                                + " may; retry when earlier messages have left");
                    }
                    throw new EagainException("the send buffer is full (" + q + " of " + b + " bytes queued);"
                            + " retry when earlier messages have left, or raise SO_SNDBUF");
                }
                long left = deadline == Long.MAX_VALUE ? waitSliceNanos : deadline - System.nanoTime();
                if (left <= 0) {
                    throw new EtimedoutException("the send buffer stayed full for SO_SNDTIMEO");
                }
                if (socket.pollsForBudget()) {
                    yieldUntilRoom(Long.MAX_VALUE, deadline, socket);     // busy-poll: never parks
                    continue;
                }
                if (spin.window() > 0 && !timed) {
                    timed = true;
                    waitStart = clock.getAsLong();
                    if (spin.worthSpinning()) {
                        yieldUntilRoom(waitStart + spin.window(), deadline, socket);
                        continue;                   // counted in again: look under the lock before parking
                    }
                }
                parked = timed;
                changed.await(lock, left);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new EintrException("interrupted while waiting for send-buffer space; nothing was sent");
        } finally {
            if (timed) {
                spin.replied(waitEnd(waitStart, parked));   // room came, or the wait failed: either ends it
            }
            waiters--;
            lock.unlock();
        }
    }

    /**
     * How long a budget wait that began at {@code waitStart} lasted: to now, or for a sender that parked, to the
     * release that woke it if one did meanwhile. Timed to its running again, a parked sender's wait also held its
     * wake-up (tens of microseconds on a busy host), which no yielding sender pays, so parking could keep the rule
     * parked (decision 0035).
     */
    private long waitEnd(long waitStart, boolean parked) {
        long now = clock.getAsLong();
        long end = now;
        if (parked) {
            long released = releasedToWaiters;
            if (released - waitStart > 0 && released - now < 0) {
                end = released;
            }
        }
        return end - waitStart;
    }

    /**
     * Called and returning under the lock, counted as a waiter: yields the core without the lock and uncounted (a
     * release then takes no lock and wakes nobody) until there is room, the window ends ({@code until}, the clock's)
     * or the send's deadline passes. The caller looks again under the lock, counted in, before it parks, so a release
     * meanwhile is not missed.
     */
    private void yieldUntilRoom(long until, long deadline, Owner socket) throws InterruptedException, EbadfException {
        waiters--;
        lock.unlock();
        try {
            while (!room(queued.get(), budget)) {
                if (Thread.interrupted()) {
                    throw new InterruptedException();
                }
                socket.checkOpen();
                if ((until != Long.MAX_VALUE && clock.getAsLong() - until >= 0)
                        || (deadline != Long.MAX_VALUE && System.nanoTime() - deadline >= 0)) {
                    return;
                }
                socket.pollForBudget();
                if (room(queued.get(), budget)) {
                    return;
                }
                Thread.yield();
            }
        } finally {
            lock.lock();
            waiters++;
        }
    }

    /** Gives back room for {@code count} messages of {@code len} bytes in all; wakes waiters if any. */
    void release(int count, long len) {
        queued.addAndGet(-(len + count * ONE_MESSAGE));
        if (waiters > 0) {
            if (spin.window() > 0) {
                releasedToWaiters = clock.getAsLong();      // only timed waits need it
            }
            wakeAll();
        }
    }

    /** Waits until every message queued has been released; false if the timeout passed first. */
    boolean awaitEmpty(long timeoutNanos, Owner socket) throws EbadfException {
        long deadline = System.nanoTime() + timeoutNanos;
        lock.lock();
        waiters++;
        try {
            // Messages, not only bytes: zero-length messages take no bytes but must leave too.
            while (queued.get() != 0) {
                socket.checkOpen();
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return false;
                }
                changed.await(lock, left);
            }
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return queued.get() == 0;
        } finally {
            waiters--;
            lock.unlock();
        }
    }

    /** Wakes everyone waiting (a release, a new budget, a close). */
    void wakeAll() {
        Thread last;
        lock.lock();
        try {
            last = changed.signalAllAfterUnlock();
        } finally {
            lock.unlock();
        }
        if (last != null) {
            LockSupport.unpark(last);               // after the lock: the sender wakes into a free lock
        }
    }
}
