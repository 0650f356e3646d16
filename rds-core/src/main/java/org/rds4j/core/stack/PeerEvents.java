package org.rds4j.core.stack;

import java.util.List;
import java.util.Objects;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.rds4j.RdsPeerEvent;
import org.rds4j.RdsPeerStateListener;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Hands peer-state changes from the connections' owners to the stack's listeners and its MBean, on a thread of the
 * stack's own ({@code rds4j-NAME-events}): an owner only queues the event and goes on, so a listener that blocks
 * never stalls traffic. The thread starts with the first event that has someone to tell and ends after a quiet
 * minute; events of one peer keep their order (one thread). At most {@link #MAX_PENDING} events wait; beyond, the
 * newest are dropped and logged, so that a listener that never returns cannot make the stack hold events without
 * bound.
 */
final class PeerEvents {
    private static final Logger log = LoggerFactory.getLogger(PeerEvents.class);
    static final int MAX_PENDING = 4096;

    private final List<RdsPeerStateListener> listeners = new CopyOnWriteArrayList<>();
    private final ThreadPoolExecutor thread;
    /** The MBean's notification sender, or {@code null} without JMX. */
    private volatile Consumer<RdsPeerEvent> jmx;

    PeerEvents(String stackName) {
        this.thread = new ThreadPoolExecutor(1, 1, 60, TimeUnit.SECONDS, new ArrayBlockingQueue<>(MAX_PENDING), r -> {
            Thread t = new Thread(r, "rds4j-" + stackName + "-events");
            t.setDaemon(true);
            return t;
        });
        thread.allowCoreThreadTimeOut(true);
    }

    void add(RdsPeerStateListener listener) {
        listeners.add(Objects.requireNonNull(listener,
                "listener is null: pass the RdsPeerStateListener to tell of peers' state changes"));
    }

    void remove(RdsPeerStateListener listener) {
        listeners.remove(listener);
    }

    void jmx(Consumer<RdsPeerEvent> sender) {
        this.jmx = sender;
    }

    /** Queues {@code event} for the listeners and the MBean; any thread, returns at once. */
    void publish(RdsPeerEvent event) {
        if (listeners.isEmpty() && jmx == null) {
            return;
        }
        try {
            thread.execute(() -> deliver(event));
        } catch (RejectedExecutionException e) {
            if (!thread.isShutdown()) {
                log.warn("{} peer-state events wait for a listener that does not return; dropped: {}", MAX_PENDING,
                        event);
            }
        }
    }

    private void deliver(RdsPeerEvent event) {
        for (RdsPeerStateListener l : listeners) {
            try {
                l.peerStateChanged(event);
            } catch (RuntimeException e) {
                log.warn("a peer-state listener failed on {}; the others are told all the same", event, e);
            }
        }
        Consumer<RdsPeerEvent> j = jmx;
        if (j != null) {
            try {
                j.accept(event);
            } catch (RuntimeException e) {
                log.warn("cannot send the JMX notification for {}", event, e);
            }
        }
    }

    /** The stack closes: events already queued are still told, then the thread ends. */
    void close() {
        thread.shutdown();
    }
}
