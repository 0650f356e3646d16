package org.rds4j.transport.tcp;

import io.netty.channel.IoHandler;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.SelectStrategy;
import io.netty.channel.nio.NioIoHandler;
import io.netty.util.IntSupplier;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.nio.channels.Selector;
import java.nio.channels.spi.SelectorProvider;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How an I/O thread waits once it has nothing to do, in the manner of Aeron's backoff idle strategy: for
 * {@code yieldNanos} after its last work it polls epoll (or, under busy-poll's caller I/O, NIO's selector) without
 * blocking and checks its task queue, giving the core up ({@link Thread#yield()}) between checks, and only then
 * sleeps in {@code epoll_wait} or {@code select} as Netty's default strategy does. Under busy-poll the application
 * threads poll the sockets themselves (docs/threading.md), so the I/O threads wait this way too.
 *
 * <p>Why yield before sleeping: on a machine with fewer cores than busy threads a wake-up is the expensive part of a
 * hand-off (the scheduler has to pick the sleeping thread again), and the reply to what an I/O thread just wrote or
 * delivered usually comes back within a round trip. A thread that is still yielding when it comes takes it without
 * being woken, and a thread that yields lets every thread with work run first, so the yielding costs only CPU that
 * nobody else wanted (docs/decisions/0001-io-threads-yield-before-they-sleep.md).
 *
 * <p>Why never a pure spin, not even a short one: a thread that does not give its core up makes a thread with work on
 * the same core wait. Busy-poll spinning in native code (Netty's {@code BUSY_WAIT}) made every round trip on the
 * project's 2-core machine take 8 ms, the scheduler's time slice; spinning 20 us after the last work before yielding
 * (with the blocking receive's 1,000 spins) still made a 64-byte round trip take 86 us, and yielding from the first
 * check 30 (docs/decisions/0002-busy-poll-yields-between-checks.md). On an idle core a yield returns at once, so it
 * costs a spinning thread well under a microsecond where nobody else wants the core.
 *
 * <p>Each turn is one zero-timeout {@code epoll_wait} (or {@code selectNow}) and one clock read, and asks for the
 * transmit passes that connections owe at a deadline ({@link DeferredTransmits}). One instance per event loop, used
 * only by its thread.
 *
 * <p>Under NIO the turn selects on Netty's selector itself ({@link #nioFactory}), not through the supplier Netty passes
 * in. Netty's {@code NioIoHandler.selectNow()} wakes the selector again after selecting whenever another thread asked
 * for a wake-up since the loop last slept, as Netty's own select loop needs, and that request stands until the loop
 * next sleeps. A loop that yields between non-blocking selects would thus write the selector's eventfd and read it back
 * on every turn once another thread had handed it a task, until it slept, which a loop with steady traffic may not do
 * for seconds (docs/decisions/0034-nio-loops-select-without-waking-themselves.md). Selecting directly leaves Netty's
 * request standing while the loop yields, so other threads' tasks still write no eventfd, and Netty clears it when the
 * strategy lets the loop sleep.
 */
final class BackoffSelectStrategy implements SelectStrategy {
    /**
     * How long an idle I/O thread yields before it sleeps unless {@code tcp.yieldMicros} says otherwise: longer than
     * a round trip of up to 64 KiB on a busy 2-core machine (rds4j's 75 to 110 us at 64 KiB, raw NIO's about 60 us
     * at 64 B), so the reply to what it just handled finds it awake. 100 us covered 64 B but not 64 KiB, whose
     * replies found the thread asleep in {@code epoll_wait}
     * (docs/decisions/0001-io-threads-yield-before-they-sleep.md).
     */
    static final int DEFAULT_YIELD_MICROS = 250;

    private static final Logger log = LoggerFactory.getLogger(BackoffSelectStrategy.class);
    /** {@code NioIoHandler.selector()}: the selector Netty selects on, or null if this version of Netty has none. */
    static final MethodHandle NIO_SELECTOR = nioSelectorAccessor();

    private final long yieldNanos;
    private long lastWork = System.nanoTime();
    /** Passes the loop's connections owe at a deadline; registered as the thread's on its first turn. */
    private final DeferredTransmits deferred = new DeferredTransmits();
    private boolean registered;
    /** Under NIO, the loop's handler, whose selector each turn selects on; null: through Netty's supplier. */
    private NioIoHandler nio;

    /**
     * @param yieldNanos how long after its last work the thread yields between checks before it sleeps, at least 0
     */
    BackoffSelectStrategy(long yieldNanos) {
        if (yieldNanos < 0) {
            throw new IllegalArgumentException("the yield time must be at least 0, was " + yieldNanos + " ns");
        }
        this.yieldNanos = yieldNanos;
    }

    /**
     * Netty's NIO handlers, each with a strategy of its own that selects on the handler's selector directly (see the
     * class comment), or through Netty's supplier if this version of Netty has no {@code selector()} to call.
     *
     * @param yieldNanos how long after its last work a loop yields between checks before it sleeps, above 0
     */
    static IoHandlerFactory nioFactory(long yieldNanos) {
        return executor -> {
            BackoffSelectStrategy strategy = new BackoffSelectStrategy(yieldNanos);
            IoHandler handler = NioIoHandler.newFactory(SelectorProvider.provider(), () -> strategy)
                    .newHandler(executor);
            if (NIO_SELECTOR != null) {
                strategy.nio = (NioIoHandler) handler;
            }
            return handler;
        };
    }

    /** The selector Netty selects on now (a new one after Netty rebuilt it). */
    private Selector nioSelector() {
        try {
            return (Selector) NIO_SELECTOR.invokeExact(nio);
        } catch (Throwable t) {                     // a getter: nothing but an Error can come out of it
            if (t instanceof Error e) {
                throw e;
            }
            throw new IllegalStateException(t);
        }
    }

    private static MethodHandle nioSelectorAccessor() {
        try {
            return MethodHandles.privateLookupIn(NioIoHandler.class, MethodHandles.lookup())
                    .findVirtual(NioIoHandler.class, "selector", MethodType.methodType(Selector.class));
        } catch (ReflectiveOperationException | SecurityException | IllegalArgumentException e) {
            log.debug("Netty's NioIoHandler.selector() cannot be called ({}): NIO loops select through Netty's"
                    + " supplier, which may wake the selector on every turn", e.toString());
            return null;
        }
    }

    @Override
    public int calculateStrategy(IntSupplier selectNow, boolean hasTasks) throws Exception {
        if (!registered) {
            deferred.register();
            registered = true;
        }
        int ready = nio != null ? nioSelector().selectNow() : selectNow.get();
        long now = System.nanoTime();
        if (deferred.runDue(now)) {
            hasTasks = true;                            // the due passes are queued tasks now
        }
        if (ready > 0 || hasTasks) {
            lastWork = now;
            return ready;                               // Netty handles the events, then runs the tasks
        }
        // A pass owed at a deadline keeps the thread from sleeping: it comes within tens of microseconds.
        if (now - lastWork < yieldNanos || deferred.pending()) {
            Thread.yield();
            return SelectStrategy.CONTINUE;             // the loop again: its tasks, then this check
        }
        return SelectStrategy.SELECT;                   // sleeps; a submitted task wakes it through the eventfd
    }
}
