package org.rds4j.core;

import java.io.IOException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.rds4j.EaddrinuseException;
import org.rds4j.EaddrnotavailException;
import org.rds4j.EagainException;
import org.rds4j.EbadfException;
import org.rds4j.EintrException;
import org.rds4j.EinvalException;
import org.rds4j.EmsgsizeException;
import org.rds4j.EnobufsException;
import org.rds4j.EnoprotooptException;
import org.rds4j.EnotconnException;
import org.rds4j.EopnotsuppException;
import org.rds4j.EtimedoutException;
import org.rds4j.RdsDatagram;
import org.rds4j.RdsMessageInfo;
import org.rds4j.RdsSocket;
import org.rds4j.RdsSocketOption;
import org.rds4j.RdsSocketOptions;
import org.rds4j.RdsStack;
import org.rds4j.core.RdsCounters.Counter;
import org.rds4j.core.cong.CongestionMap;
import org.rds4j.core.conn.Connection;
import org.rds4j.core.conn.MessageOwner;
import org.rds4j.core.conn.OutgoingMessage;

/**
 * An RDS socket: the kernel's {@code rds_sock}. It owns a send-buffer budget and a receive queue; messages travel on
 * the connection its stack keeps to each peer.
 *
 * <p>Budgets follow the kernel: half of {@code SO_SNDBUF} bounds the payload bytes queued and not yet released (a
 * send is accepted while less than the budget is used, so the last one may overshoot), and a port whose unread
 * payload exceeds half of {@code SO_RCVBUF} is marked congested until it drains below half of that again.
 */
final class CoreSocket implements RdsSocket, MessageOwner {
    /** Linux's floor for SO_SNDBUF and SO_RCVBUF after doubling (SOCK_MIN_SNDBUF, SOCK_MIN_RCVBUF on x86-64). */
    static final int MIN_SNDBUF = 4608;
    static final int MIN_RCVBUF = 2304;

    private final CoreStack stack;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition readable = lock.newCondition();
    private final Condition writable = lock.newCondition();
    private final ArrayDeque<RdsDatagram> receiveQueue = new ArrayDeque<>();
    /** Send-failure notifications (RDS_RECVERR), returned ahead of data. */
    private final ArrayDeque<RdsDatagram> failures = new ArrayDeque<>();
    private volatile CoreSelector.Registration[] registrations = NO_REGISTRATIONS;
    private static final CoreSelector.Registration[] NO_REGISTRATIONS = {};

    private volatile boolean closed;
    private volatile boolean blocking = true;
    private volatile InetSocketAddress local;
    private String transportName;
    private TransportBinding transport;
    private int sndbuf;
    private int rcvbuf;
    private long sendTimeoutNanos;
    private long receiveTimeoutNanos;
    private long sendQueued;
    private long receiveQueued;
    private boolean congested;
    private boolean congestionMonitor;
    private long monitorMask;
    private long monitorNotify;
    private boolean recvErr;

    CoreSocket(CoreStack stack) {
        this.stack = stack;
        this.sndbuf = stack.config().defaultSendBuffer();
        this.rcvbuf = stack.config().defaultReceiveBuffer();
    }

    // ------------------------------------------------------------------------------------------------ bind

    @Override
    public void bind(InetSocketAddress address) throws IOException {
        checkOpen();
        if (address == null || address.isUnresolved()) {
            throw new EinvalException("bind needs a resolved local address, not " + address);
        }
        InetAddress a = address.getAddress();
        if (a.isAnyLocalAddress() || a.isMulticastAddress() || isBroadcast(a)) {
            throw new EinvalException("cannot bind " + a.getHostAddress()
                    + ": RDS binds one unicast address (there is no wildcard bind)");
        }
        if (address.getPort() == 1) {
            throw new EinvalException("RDS port 1 is reserved for the multipath probe; bind another port");
        }
        TransportBinding t;
        lock.lock();
        try {
            if (local != null) {
                throw new EinvalException("the socket is already bound to " + local + "; RDS sockets bind once");
            }
            String name = transportName != null ? transportName : stack.defaultTransport();
            t = stack.transport(name);
            transportName = name;
        } finally {
            lock.unlock();
        }
        if (!stack.config().addresses().isEmpty() && !stack.config().addresses().contains(a)) {
            throw new EaddrnotavailException(a.getHostAddress() + " is not an address of stack '"
                    + stack.config().name() + "' (its addresses: " + stack.config().addresses() + ")");
        }
        if (!t.instance().canBind(a)) {
            throw new EaddrnotavailException(a.getHostAddress() + " is not a local address for the " + t.name()
                    + " transport; bind an address of this machine");
        }
        try {
            t.ensureListening(a);
        } catch (IOException e) {
            throw new EaddrinuseException("the " + t.name() + " transport cannot listen on " + a.getHostAddress()
                    + " port " + stack.config().tcpPort() + " (" + e.getMessage() + "): another RDS host (another"
                    + " process or stack) probably uses it; give this stack another address or TCP port", e);
        }
        int port = stack.bindTable().bind(a, address.getPort(), this,
                bound -> ThreadLocalRandom.current().nextInt(bound));
        lock.lock();
        try {
            transport = t;
            local = new InetSocketAddress(a, port);
        } finally {
            lock.unlock();
        }
        if (closed) {                                 // closed while binding: give the port back
            stack.bindTable().unbind(a, port, this);
        }
    }

    @Override
    public InetSocketAddress localAddress() {
        return local;
    }

    // ------------------------------------------------------------------------------------------------ send

    @Override
    public int send(ByteBuffer payload, InetSocketAddress destination) throws IOException {
        checkOpen();
        InetSocketAddress from = local;
        if (from == null) {
            throw new EnotconnException("bind the socket to a local address before sending");
        }
        InetAddress to = checkDestination(destination, from);
        int len = payload.remaining();
        if (len > CoreStack.MAX_MESSAGE_SIZE) {
            throw new EmsgsizeException(len + " bytes is more than RDS's maximum message of "
                    + CoreStack.MAX_MESSAGE_SIZE + " bytes; split the data into several messages");
        }
        int budget = sendBudget();
        if (len > budget) {
            throw new EmsgsizeException(len + " bytes is more than this socket's send budget of " + budget
                    + " bytes (half of SO_SNDBUF); set SO_SNDBUF to at least " + len);
        }
        if (stack.isLocal(to)) {
            return sendLocal(payload, from, to, destination.getPort());
        }
        Connection c = stack.connection(from.getAddress(), to, transport);
        int dport = destination.getPort();
        waitUncongested(c.peerMap(), dport);
        boolean halfFull = reserve(len, budget);
        ByteBuffer copy = ByteBuffer.allocate(len);
        copy.put(payload).flip();
        c.pathFor(from.getPort()).enqueue(new OutgoingMessage(from.getPort(), dport, copy, this, null, halfFull));
        stack.statistics().increment(Counter.SEND_QUEUED);
        return len;
    }

    private InetAddress checkDestination(InetSocketAddress destination, InetSocketAddress from) throws IOException {
        if (destination == null) {
            throw new EnotconnException("no destination given; pass the address and RDS port to send to");
        }
        if (destination.isUnresolved()) {
            throw new EinvalException("destination " + destination + " is not resolved; resolve it first");
        }
        InetAddress to = destination.getAddress();
        if (to.isAnyLocalAddress() || to.isMulticastAddress() || isBroadcast(to)) {
            throw new EinvalException("cannot send to " + to.getHostAddress() + ": RDS sends to one unicast address");
        }
        if ((to instanceof Inet4Address) != (from.getAddress() instanceof Inet4Address)) {
            throw new EopnotsuppException("the socket is bound to " + from.getAddress().getHostAddress()
                    + " and cannot send to " + to.getHostAddress() + " of the other IP family");
        }
        return to;
    }

    /**
     * To an address of this same stack no transport is involved, as the kernel's loopback transport: the message is
     * queued on the destination socket at once, and a ping is answered at once.
     */
    private int sendLocal(ByteBuffer payload, InetSocketAddress from, InetAddress to, int dport) {
        int len = payload.remaining();
        ByteBuffer copy = ByteBuffer.allocate(len);
        copy.put(payload).flip();
        stack.statistics().increment(Counter.SEND_QUEUED);
        if (dport == 0) {
            stack.statistics().increment(Counter.RECV_PING);
            stack.statistics().increment(Counter.SEND_PONG);
            stack.deliver(from.getAddress(), from.getPort(), new InetSocketAddress(to, 0), ByteBuffer.allocate(0));
        } else if (!stack.deliver(to, dport, from, copy)) {
            stack.statistics().increment(Counter.RECV_DROP_NO_SOCK);
        }
        return len;
    }

    /** Blocks while the destination port is congested at the peer, or fails at once if non-blocking. */
    private void waitUncongested(CongestionMap peerMap, int port) throws IOException {
        if (!peerMap.isCongested(port)) {
            return;
        }
        if (!blocking) {
            // As the kernel: add the port to the monitor mask, then test once more. Both happen under the map's
            // monitor, which a map update holds while it replaces the map and fires the masks, so exactly one of
            // two things is true: the update came after the bit (and fires it), or before (and the re-test sees it,
            // sending if the port cleared). No notification is lost, and none fires for the map that refused us.
            synchronized (peerMap) {
                boolean monitoring;
                lock.lock();
                try {
                    monitoring = congestionMonitor;
                    if (monitoring) {
                        monitorMask |= 1L << (port % 64);
                    }
                } finally {
                    lock.unlock();
                }
                if (monitoring && !peerMap.isCongested(port)) {
                    return;
                }
            }
            stack.statistics().increment(Counter.CONG_SEND_ERROR);
            throw new EnobufsException("port " + port + " of the destination is congested: its receiver is behind;"
                    + " retry later or send blocking");
        }
        stack.statistics().increment(Counter.CONG_SEND_BLOCKED);
        try {
            // Like the kernel, no timeout applies here; wake now and then to notice a close.
            while (!peerMap.awaitClear(port, TimeUnit.MILLISECONDS.toNanos(100))) {
                checkOpen();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new EintrException("interrupted while waiting for a congested port; nothing was sent");
        }
        checkOpen();
    }

    /**
     * Takes send-buffer space: accepted while less than the budget is in use (the last may overshoot).
     *
     * @return whether the buffer was at least half full: the message then asks for a prompt acknowledgement, as the
     *         kernel marks it ACK_REQUIRED
     */
    private boolean reserve(int len, int budget) throws IOException {
        lock.lock();
        try {
            long deadline = sendTimeoutNanos == 0 ? Long.MAX_VALUE : System.nanoTime() + sendTimeoutNanos;
            boolean counted = false;
            while (sendQueued >= budget) {
                checkOpen();
                if (!counted) {
                    stack.statistics().increment(Counter.SEND_QUEUE_FULL);
                    counted = true;
                }
                if (!blocking) {
                    throw new EagainException("the send buffer is full (" + sendQueued + " of " + budget
                            + " bytes queued); retry when earlier messages have left, or raise SO_SNDBUF");
                }
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw new EtimedoutException("the send buffer stayed full for SO_SNDTIMEO");
                }
                writable.awaitNanos(left);
            }
            checkOpen();
            boolean halfFull = sendQueued >= budget / 2;
            sendQueued += len;
            return halfFull;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new EintrException("interrupted while waiting for send-buffer space; nothing was sent");
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void released(OutgoingMessage message) {
        lock.lock();
        try {
            sendQueued -= message.length();
            writable.signalAll();
        } finally {
            lock.unlock();
        }
        signalSelectors();
    }

    @Override
    public void failed(OutgoingMessage message, InetSocketAddress destination, RdsDatagram.Failure reason) {
        boolean report;
        lock.lock();
        try {
            sendQueued -= message.length();
            writable.signalAll();
            report = recvErr && !closed;
            if (report) {
                failures.addLast(RdsDatagram.sendFailed(destination, message.length(), reason, System.nanoTime()));
                readable.signal();
            }
        } finally {
            lock.unlock();
        }
        signalSelectors();
    }

    @Override
    public void cancelSentTo(InetSocketAddress destination) throws IOException {
        checkOpen();
        InetSocketAddress from = local;
        if (from == null) {
            throw new EnotconnException("the socket is not bound, so it has sent nothing to cancel");
        }
        if (destination == null || destination.isUnresolved()) {
            throw new EinvalException("cancelSentTo needs a resolved destination address and port, not "
                    + destination);
        }
        Connection c = stack.existingConnection(from.getAddress(), destination.getAddress(), transport);
        if (c != null) {
            for (int i = 0; i < c.pathCount(); i++) {
                c.path(i).cancel(this, destination.getPort());
            }
        }
    }

    @Override
    public boolean awaitSent(Duration timeout) throws IOException {
        long deadline = System.nanoTime() + timeout.toNanos();
        lock.lock();
        try {
            while (sendQueued > 0) {
                checkOpen();
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return false;
                }
                writable.awaitNanos(left);
            }
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return sendQueued == 0;
        } finally {
            lock.unlock();
        }
    }

    private int sendBudget() {
        lock.lock();
        try {
            return sndbuf / 2;
        } finally {
            lock.unlock();
        }
    }

    // ------------------------------------------------------------------------------------------------ receive

    /** Queues a message that arrived for this socket; false if the socket is closed. Any thread. */
    boolean enqueue(InetSocketAddress source, int port, ByteBuffer payload) {
        boolean mapChanged = false;
        int len = payload.remaining();
        lock.lock();
        try {
            if (closed) {
                return false;
            }
            receiveQueue.addLast(new RdsDatagram(source, port, payload, System.nanoTime()));
            receiveQueued += len;
            if (!congested && receiveQueued > rcvbuf / 2) {
                congested = true;
                mapChanged = stack.markPort(local.getAddress(), port, true);
            }
            readable.signal();
        } finally {
            lock.unlock();
        }
        stack.statistics().increment(Counter.RECV_QUEUED);
        stack.statistics().add(Counter.RECV_BYTES_ADDED_TO_SOCK, len);
        if (mapChanged) {
            stack.sendCongestionUpdates(local.getAddress());
        }
        signalSelectors();
        return true;
    }

    /** A peer's congestion map changed: with monitoring on, every monitored bit fires (the kernel over TCP). */
    void peerCongestionUpdated() {
        boolean fired = false;
        lock.lock();
        try {
            if (congestionMonitor && monitorMask != 0) {
                monitorNotify |= monitorMask;
                monitorMask = 0;
                fired = true;
                readable.signal();
            }
        } finally {
            lock.unlock();
        }
        if (fired) {
            signalSelectors();
        }
    }

    boolean monitorsCongestion() {
        return congestionMonitor;
    }

    @Override
    public RdsDatagram receive() throws IOException {
        return orTimeout(take(blocking ? blockingWait() : 0, false));
    }

    /** How long a blocking receive waits: SO_RCVTIMEO, or for ever. */
    private long blockingWait() {
        long t = receiveTimeoutNanos;
        return t == 0 ? Long.MAX_VALUE : t;
    }

    /** Nothing came: EAGAIN for a call that could not wait, ETIMEDOUT (as recvmsg) when SO_RCVTIMEO ran out. */
    private <T> T orTimeout(T item) throws IOException {
        if (item != null) {
            return item;
        }
        if (blocking && receiveTimeoutNanos != 0) {
            throw new EtimedoutException("no message arrived within SO_RCVTIMEO");
        }
        throw new EagainException("no message is queued on this non-blocking socket; wait until one arrives");
    }

    @Override
    public Optional<RdsDatagram> receive(Duration timeout) throws IOException {
        return Optional.ofNullable(take(timeout.isNegative() ? 0 : saturatedNanos(timeout), false));
    }

    @Override
    public int receive(ByteBuffer dst, RdsMessageInfo info, int flags) throws IOException {
        boolean peek = (flags & MSG_PEEK) != 0;
        boolean wait = blocking && (flags & MSG_DONTWAIT) == 0;
        RdsDatagram d = take(wait ? blockingWait() : 0, peek);
        if (d == null) {
            if (wait) {
                throw new EtimedoutException("no message arrived within SO_RCVTIMEO");
            }
            throw new EagainException("no message is queued; wait until one arrives");
        }
        int n = 0;
        boolean truncated = false;
        if (d.kind() == RdsDatagram.Kind.DATA) {
            ByteBuffer payload = d.payload();
            n = Math.min(dst.remaining(), payload.limit());
            truncated = n < payload.limit();
            dst.put(dst.position(), payload, 0, n);
            dst.position(dst.position() + n);
        }
        info.set(d, truncated);
        return n;
    }

    /**
     * The next item: a send failure, then a congestion notification, then a message, as the kernel's recvmsg orders
     * them; {@code null} if none came within the timeout. With {@code peek} a message stays queued.
     */
    private RdsDatagram take(long timeoutNanos, boolean peek) throws IOException {
        RdsDatagram d;
        boolean mapChanged = false;
        lock.lock();
        try {
            long deadline = timeoutNanos == Long.MAX_VALUE ? Long.MAX_VALUE : System.nanoTime() + timeoutNanos;
            while (true) {
                if (!failures.isEmpty()) {
                    return peek ? failures.peekFirst() : failures.pollFirst();
                }
                if (monitorNotify != 0) {
                    d = RdsDatagram.congestionUpdate(monitorNotify, System.nanoTime());
                    if (!peek) {
                        monitorNotify = 0;
                    }
                    return d;
                }
                d = peek ? receiveQueue.peekFirst() : receiveQueue.pollFirst();
                if (d != null) {
                    break;
                }
                checkOpen();
                long left = deadline == Long.MAX_VALUE ? Long.MAX_VALUE : deadline - System.nanoTime();
                if (left <= 0) {
                    return null;
                }
                if (left == Long.MAX_VALUE) {
                    readable.await();
                } else {
                    readable.awaitNanos(left);
                }
            }
            if (peek) {
                return d;
            }
            receiveQueued -= d.length();
            if (congested && receiveQueued < rcvbuf / 4) {
                congested = false;
                mapChanged = stack.markPort(local.getAddress(), local.getPort(), false);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new EintrException("interrupted while waiting for a message");
        } finally {
            lock.unlock();
        }
        stack.statistics().increment(Counter.RECV_DELIVERED);
        stack.statistics().add(Counter.RECV_BYTES_FREED_FROMSOCK, d.length());
        if (mapChanged) {
            stack.sendCongestionUpdates(local.getAddress());
        }
        return d;
    }

    @Override
    public boolean isReadable() {
        lock.lock();
        try {
            return !receiveQueue.isEmpty() || !failures.isEmpty() || monitorNotify != 0;
        } finally {
            lock.unlock();
        }
    }

    @Override
    public boolean isWritable() {
        lock.lock();
        try {
            return sendQueued < sndbuf / 2;
        } finally {
            lock.unlock();
        }
    }

    // ------------------------------------------------------------------------------------------------ selectors

    void addRegistration(CoreSelector.Registration r) {
        synchronized (this) {
            CoreSelector.Registration[] old = registrations;
            CoreSelector.Registration[] grown = java.util.Arrays.copyOf(old, old.length + 1);
            grown[old.length] = r;
            registrations = grown;
        }
    }

    void removeRegistration(CoreSelector.Registration r) {
        synchronized (this) {
            CoreSelector.Registration[] old = registrations;
            registrations = java.util.Arrays.stream(old).filter(x -> x != r)
                    .toArray(CoreSelector.Registration[]::new);
        }
    }

    /** Something changed that may make this socket ready: tell the selectors it is registered with. */
    private void signalSelectors() {
        for (CoreSelector.Registration r : registrations) {
            r.signal();
        }
    }

    private static long saturatedNanos(Duration d) {
        try {
            return d.toNanos();
        } catch (ArithmeticException e) {
            return Long.MAX_VALUE;
        }
    }

    // ------------------------------------------------------------------------------------------------ options

    @Override
    public void configureBlocking(boolean blocking) {
        this.blocking = blocking;
    }

    @Override
    public boolean isBlocking() {
        return blocking;
    }

    @Override
    public <T> RdsSocket setOption(RdsSocketOption<T> option, T value) throws IOException {
        checkOpen();
        if (value == null) {
            throw new EinvalException(option + " needs a value");
        }
        lock.lock();
        try {
            if (option == RdsSocketOptions.SO_SNDBUF) {
                sndbuf = bufferSize((Integer) value, MIN_SNDBUF, option);
                writable.signalAll();
            } else if (option == RdsSocketOptions.SO_RCVBUF) {
                rcvbuf = bufferSize((Integer) value, MIN_RCVBUF, option);
            } else if (option == RdsSocketOptions.SO_RDS_TRANSPORT) {
                if (transportName != null) {
                    throw new EopnotsuppException("the transport is already " + transportName
                            + "; choose it once, before bind");
                }
                String name = (String) value;
                if (!stack.hasTransport(name)) {
                    stack.transport(name);           // throws ENOPROTOOPT naming what is installed
                }
                transportName = name;
            } else if (option == RdsSocketOptions.SO_SNDTIMEO || option == RdsSocketOptions.SO_RCVTIMEO) {
                Duration d = (Duration) value;
                if (d.isNegative()) {
                    throw new EinvalException(option + " cannot be negative");
                }
                if (option == RdsSocketOptions.SO_SNDTIMEO) {
                    sendTimeoutNanos = saturatedNanos(d);
                } else {
                    receiveTimeoutNanos = saturatedNanos(d);
                }
            } else if (option == RdsSocketOptions.RDS_CONG_MONITOR) {
                congestionMonitor = (Boolean) value;
                if (!congestionMonitor) {
                    monitorMask = 0;
                    monitorNotify = 0;
                }
            } else if (option == RdsSocketOptions.RDS_RECVERR) {
                recvErr = (Boolean) value;
            } else if (option == RdsSocketOptions.RDS_SEND_QUEUED) {
                throw new EinvalException(option + " is read-only");
            } else {
                throw new EnoprotooptException(option + " is not an RDS socket option");
            }
        } finally {
            lock.unlock();
        }
        return this;
    }

    /** Linux's arithmetic: cap at the maximum, double, and keep above the floor. */
    private int bufferSize(int requested, int floor, RdsSocketOption<?> option) throws EinvalException {
        if (requested < 0) {
            throw new EinvalException(option + " cannot be negative");
        }
        long capped = Math.min(requested, stack.config().maxSocketBuffer());
        return (int) Math.max(capped * 2, floor);
    }

    @Override
    @SuppressWarnings("unchecked")
    public <T> T getOption(RdsSocketOption<T> option) throws IOException {
        checkOpen();
        lock.lock();
        try {
            if (option == RdsSocketOptions.SO_SNDBUF) {
                return (T) Integer.valueOf(sndbuf);
            } else if (option == RdsSocketOptions.SO_RCVBUF) {
                return (T) Integer.valueOf(rcvbuf);
            } else if (option == RdsSocketOptions.SO_RDS_TRANSPORT) {
                return (T) transportName;
            } else if (option == RdsSocketOptions.SO_SNDTIMEO) {
                return (T) Duration.ofNanos(sendTimeoutNanos);
            } else if (option == RdsSocketOptions.SO_RCVTIMEO) {
                return (T) Duration.ofNanos(receiveTimeoutNanos);
            } else if (option == RdsSocketOptions.RDS_SEND_QUEUED) {
                return (T) Integer.valueOf((int) sendQueued);
            } else if (option == RdsSocketOptions.RDS_CONG_MONITOR) {
                return (T) Boolean.valueOf(congestionMonitor);
            } else if (option == RdsSocketOptions.RDS_RECVERR) {
                return (T) Boolean.valueOf(recvErr);
            }
        } finally {
            lock.unlock();
        }
        throw new EnoprotooptException(option + " is not an RDS socket option");
    }

    // ------------------------------------------------------------------------------------------------ life

    @Override
    public RdsStack stack() {
        return stack;
    }

    @Override
    public boolean isOpen() {
        return !closed;
    }

    @Override
    public boolean isClosed() {
        return closed;
    }

    @Override
    public void close() {
        boolean mapChanged = false;
        InetSocketAddress bound;
        lock.lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
            if (congested && local != null) {
                mapChanged = stack.markPort(local.getAddress(), local.getPort(), false);
            }
            congested = false;
            receiveQueue.clear();
            failures.clear();
            bound = local;
            readable.signalAll();
            writable.signalAll();
        } finally {
            lock.unlock();
        }
        if (bound != null) {
            stack.bindTable().unbind(bound.getAddress(), bound.getPort(), this);
            if (mapChanged) {
                stack.sendCongestionUpdates(bound.getAddress());
            }
        }
        stack.socketClosed(this);
        signalSelectors();
    }

    private void checkOpen() throws EbadfException {
        if (closed) {
            throw new EbadfException("the socket is closed; open a new one");
        }
    }

    private static boolean isBroadcast(InetAddress a) {
        byte[] b = a.getAddress();
        return b.length == 4 && b[0] == (byte) 0xFF && b[1] == (byte) 0xFF && b[2] == (byte) 0xFF
                && b[3] == (byte) 0xFF;
    }

    @Override
    public String toString() {
        return "RdsSocket[" + (local == null ? "unbound" : local.toString()) + (closed ? ", closed" : "") + "]";
    }
}
