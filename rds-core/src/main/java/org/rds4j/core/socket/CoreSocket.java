package org.rds4j.core.socket;

import org.rds4j.core.stack.CoreStack;
import org.rds4j.core.stack.Inspection;
import org.rds4j.core.stack.TransportBinding;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.locks.ReentrantLock;
import org.rds4j.EbadfException;
import org.rds4j.EaccesException;
import org.rds4j.EconnrefusedException;
import org.rds4j.EinvalException;
import org.rds4j.EmsgsizeException;
import org.rds4j.EnotconnException;
import org.rds4j.EtimedoutException;
import org.rds4j.RdsDatagram;
import org.rds4j.RdsMessageInfo;
import org.rds4j.RdsSocket;
import org.rds4j.RdsSocketOption;
import org.rds4j.RdsStack;
import org.rds4j.core.stack.RdsCounters.Counter;
import org.rds4j.core.cong.CongestionMonitor;
import org.rds4j.core.path.Arrival;
import org.rds4j.core.path.Connection;
import org.rds4j.core.path.ConnectionPath;
import org.rds4j.core.path.MessageOwner;
import org.rds4j.core.path.MessagePool;
import org.rds4j.core.path.MessageReceiver;
import org.rds4j.core.path.OutgoingMessage;

/**
 * An RDS socket: the kernel's {@code rds_sock}. It owns a send-buffer budget and a receive queue; messages travel on
 * the connection its stack keeps to each peer.
 *
 * <p>Budgets follow the kernel: half of {@code SO_SNDBUF} bounds the payload bytes queued and not yet released (a
 * send is accepted while less than the budget is used, so the last one may overshoot), and a port whose unread
 * payload exceeds half of {@code SO_RCVBUF} is marked congested until it drains below half of that again.
 *
 * <p>The send budget is a {@link SendBuffer} and the receive side a {@link ReceiveQueue}; this class validates,
 * routes and holds the options. Messages and arrivals are pooled per socket, so a sender that reuses its buffer and
 * a receiver that uses {@link #receive(ByteBuffer, RdsMessageInfo, int)} allocate nothing per message
 * (docs/threading.md).
 */
public final class CoreSocket implements RdsSocket, MessageOwner, MessageReceiver, SendBuffer.Owner,
        ReceiveQueue.Owner {
    /** Linux's floor for SO_SNDBUF and SO_RCVBUF after doubling (SOCK_MIN_SNDBUF, SOCK_MIN_RCVBUF on x86-64). */
    static final int MIN_SNDBUF = 4608;
    static final int MIN_RCVBUF = 2304;


    private final CoreStack stack;
    /** Guards bind and the options; not taken on the message path. */
    private final ReentrantLock lock = new ReentrantLock();
    private final SendBuffer sendBuffer;
    private final ReceiveQueue receiveQueue;
    /** Spare messages with their buffers: as many as the socket once had in flight. */
    private final MessagePool messages = new MessagePool();
    private final SendCoalescer coalescer = new SendCoalescer();     // small sends that can go at once, in runs
    private final SelectorRegistrations registrations = new SelectorRegistrations();

    private volatile boolean closed;
    private volatile boolean blocking = true;
    /** The stack's busy-poll: blocking waits poll instead of parking. */
    private final boolean busyPoll;
    private volatile InetSocketAddress local;
    private volatile TransportBinding transport;
    /** The connections from the bound address over the socket's transport, by peer: the send path's lookup. */
    private volatile Map<InetAddress, Connection> peers;
    private final SocketOptions options;
    private final SocketReader reader;
    private final CongestionMonitor congestion = new CongestionMonitor();
    private final CongestionMonitor.Owner congestionOwner = new CongestionMonitor.Owner() {
        @Override
        public void checkOpen() throws IOException {
            CoreSocket.this.checkOpen();
        }

        @Override
        public void refused() {
            stack.statistics().increment(Counter.CONG_SEND_ERROR);
        }

        @Override
        public void blocked() {
            stack.statistics().increment(Counter.CONG_SEND_BLOCKED);
        }
    };
    /** The connection of the last send: steady traffic to one peer finds it with one comparison. */
    private volatile Connection lastConnection;
    /** Sends begun, for {@link ReceiveQueue.Owner#sends()}: a plain count, racy between senders, read as a hint. */
    private int sends;
    /** Set by the first zero-copy send: released messages must then be checked for cookies to report. */
    private volatile boolean zeroCopyUsed;

    public CoreSocket(CoreStack stack) {
        this.stack = stack;
        this.sendBuffer = new SendBuffer(stack.statistics(), stack.config().defaultSendBuffer() / 2,
                stack.config().replySpin().toNanos());
        this.busyPoll = stack.config().busyPoll();
        this.receiveQueue = new ReceiveQueue(this, stack.config().defaultReceiveBuffer(), busyPoll,
                stack.config().replySpin().toNanos(), stack.statistics());
        this.options = new SocketOptions(stack, sendBuffer, receiveQueue, congestion);
        this.reader = new SocketReader(receiveQueue, options);
    }

    // ------------------------------------------------------------------------------------------------ bind

    @Override
    public void bind(InetSocketAddress address) throws IOException {
        Objects.requireNonNull(address, "local is null: pass one of the stack's addresses and an RDS port (port 0"
                + " picks a free one)");
        checkOpen();
        InetAddress a = SocketAddresses.checkBind(address);
        TransportBinding t;
        lock.lock();
        try {
            if (local != null) {
                throw new EinvalException("the socket is already bound to " + SocketAddresses.format(local)
                        + "; RDS sockets bind once");
            }
            String name = options.transportName() != null ? options.transportName() : stack.defaultTransport();
            t = stack.transport(name);
            options.transportChosen(name);
        } finally {
            lock.unlock();
        }
        t.prepareBind(a);
        int port = stack.bindTable().bind(a, address.getPort(), this,
                bound -> ThreadLocalRandom.current().nextInt(bound));
        lock.lock();
        try {
            transport = t;
            peers = stack.peerTable(a, t);
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
        checkSendArguments(payload, destination);
        return send(payload, destination, false, 0);
    }

    @Override
    public int sendZeroCopy(ByteBuffer payload, InetSocketAddress destination, int cookie) throws IOException {
        checkSendArguments(payload, destination);
        checkOpen();
        if (!options.zeroCopy()) {
            throw new EinvalException("a zero-copy send needs SO_ZEROCOPY on this socket; set it first, or use send()");
        }
        zeroCopyUsed = true;
        return send(payload, destination, true, cookie);
    }

    /** Constant messages: the check allocates nothing on the send path. */
    private static void checkSendArguments(ByteBuffer payload, InetSocketAddress destination) {
        Objects.requireNonNull(payload, "payload is null: pass a ByteBuffer (use an empty one for a zero-length"
                + " message)");
        Objects.requireNonNull(destination, "destination is null: pass the receiver's address and RDS port");
    }

    private int send(ByteBuffer payload, InetSocketAddress destination, boolean zeroCopy, int cookie)
            throws IOException {
        checkOpen();
        sends++;
        // A reply writes itself under busy-poll; under tcp.callerIo only if nothing else waits to be read: a reader
        // with a backlog answers it next, and those replies batch on the I/O thread (decision 0033).
        sendInCaller = !sentSinceReceive && (busyPoll || receiveQueue.nothingToTake());
        sentSinceReceive = true;
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
        long budget = sendBuffer.budget();
        if (len > budget) {
            throw new EmsgsizeException(len + " bytes is more than this socket's send budget of " + budget
                    + " bytes (half of SO_SNDBUF); set SO_SNDBUF to at least " + len);
        }
        Connection c = lastConnection;
        if (c == null || c.peer() != to) {      // checkDestination gives the connection's own object when equal
            c = peers.get(to);
            if (c == null) {
                if (stack.isLocal(to)) {
                    return stack.sendLocal(payload, from, to, destination.getPort());
                }
                c = stack.connection(from.getAddress(), to, transport);
            }
            lastConnection = c;
        }
        // Once per peer, sending makes it one the stack keeps; if it was forgotten just now, a fresh one takes over.
        if (!c.isUseful() && !c.markUseful()) {
            c = lastConnection = stack.connection(from.getAddress(), to, transport);
            c.markUseful();
        }
        int dport = destination.getPort();
        checkConfirmable(c);
        checkAccepted(c);
        // Copied before waiting for the peer's port or for budget, as the kernel's rds_sendmsg copies before it waits:
        // the bytes sent are those the buffer held when send was called, and a sender that waits has its copy done.
        if (!zeroCopy && coalescer.trySend(payload, c, from.getPort(), dport, sendBuffer, messages, this)) {
            return len;                                  // appended to a run, or the first of one: queued
        }
        OutgoingMessage m = messages.take();
        if (zeroCopy) {
            m.fillZeroCopy(from.getPort(), dport, payload.slice(), cookie, this);   // a view, no copy
        } else {
            m.fill(from.getPort(), dport, payload, this);
        }
        boolean queued = false;
        try {
            congestion.awaitUncongested(c.peerMap(), dport, blocking, options.sendTimeoutNanos(), congestionOwner);
            m.askForAck(sendBuffer.reserve(len, blocking, options.sendTimeoutNanos(), this));
            if (c.ackFailure() != null) {                // found out while this sender waited for budget
                sendBuffer.release(1, len);
                checkConfirmable(c);
            }
            queued = true;
        } finally {
            if (!queued) {                               // refused: nothing was sent, the caller keeps its bytes
                m.returnLentPayload();
                messages.giveBack(m);
            }
        }
        payload.position(payload.limit());
        coalescer.sendOrdinary(c, from.getPort(), m);    // the path counts SEND_QUEUED as it takes messages in
        return len;
    }

    /** ETIMEDOUT while the peer answers no acknowledgement ping: nothing sent to it could be confirmed. */
    private static void checkConfirmable(Connection c) throws EtimedoutException {
        String why = c.ackFailure();
        if (why != null) {
            throw new EtimedoutException(why);
        }
    }

    /** ECONNREFUSED or EACCES while the peer refuses this host: what was queued for it was failed already. */
    private static void checkAccepted(Connection c) throws IOException {
        RdsDatagram.Failure refused = c.refusal();
        if (refused != null) {
            String why = c.refusalReason();
            if (refused == RdsDatagram.Failure.AUTHENTICATION_FAILED) {
                throw new EaccesException(why);
            }
            throw new EconnrefusedException(why);
        }
    }

    /**
     * The destination's address, checked. The last send's peer passed these checks, and the socket's address is fixed
     * since bind, so steady traffic skips them (they allocate); by value, as replies use address objects of their own.
     */
    private InetAddress checkDestination(InetSocketAddress destination, InetSocketAddress from) throws IOException {
        Connection last = lastConnection;
        if (last != null && !destination.isUnresolved()
                && last.peer().equals(destination.getAddress())) {
            return last.peer();
        }
        return SocketAddresses.checkDestination(destination, from);
    }

    @Override
    public void released(OutgoingMessage first, OutgoingMessage last, int entries, int count, long bytes) {
        if (zeroCopyUsed) {
            for (OutgoingMessage m = first; m != null; m = m == last ? null : m.next()) {
                zeroCopyDone(m);
            }
        }
        messages.giveBack(first, last, entries);    // with their buffers, for the next sends
        sendBuffer.release(count, bytes);
        signalSelectors();
    }

    @Override
    public void failed(OutgoingMessage message, InetSocketAddress destination, RdsDatagram.Failure reason,
                       String why) {
        int n = message.entries();                  // a run fails each message it carries
        for (int i = 0; i < n && options.recvErr() && !closed; i++) {
            receiveQueue.addFailure(RdsDatagram.sendFailed(destination, message.length(i), reason, why,
                    System.nanoTime()));
        }
        long len = message.length();
        zeroCopyDone(message);
        messages.giveBack(message);
        sendBuffer.release(n, len);
        signalSelectors();
    }

    /**
     * The peer has a zero-copy message, or it was dropped: report its cookie (unless the transport still reads the
     * caller's bytes; it reports the cookie when it gives them back) and forget the caller's memory.
     */
    private void zeroCopyDone(OutgoingMessage m) {
        if (m.isZeroCopy()) {
            if (m.completeZeroCopy()) {
                receiveQueue.addZeroCopyCompletion(m.cookie());
            }
            m.returnLentPayload();
        }
    }

    @Override
    public void zeroCopyCompleted(int cookie) {
        receiveQueue.addZeroCopyCompletion(cookie);
        signalSelectors();
    }

    @Override
    public void cancelSentTo(InetSocketAddress destination) throws IOException {
        Objects.requireNonNull(destination, "destination is null: pass the address and RDS port to give up on");
        checkOpen();
        InetSocketAddress from = local;
        if (from == null) {
            throw new EnotconnException("the socket is not bound, so it has sent nothing to cancel");
        }
        if (destination.isUnresolved()) {
            throw new EinvalException("cancelSentTo needs a resolved destination address and port, not "
                    + destination);
        }
        Connection c = stack.existingConnection(from.getAddress(), destination.getAddress(), transport);
        if (c != null) {
            c.cancel(this, destination.getPort());
        }
    }

    @Override
    public boolean awaitSent(Duration timeout) throws IOException {
        Objects.requireNonNull(timeout, "timeout is null: pass the longest wait, such as Duration.ofSeconds(5)");
        return sendBuffer.awaitEmpty(SocketOptions.saturatedNanos(timeout), this);
    }

    // ------------------------------------------------------------------------------------------------ receive

    @Override
    public Arrival claim(int length, int room, boolean direct) {
        return direct ? receiveQueue.claimDirect(length) : receiveQueue.claim(length, room);
    }

    @Override
    public void abandon(Arrival arrival) {
        receiveQueue.abandon(arrival);
    }

    @Override
    public void deliver(Arrival first, Arrival last, int count, long bytes) {
        int r = receiveQueue.deliver(first, last, count, bytes);
        if (r < 0) {
            stack.statistics().add(Counter.RECV_DROP_DEAD_SOCK, count);
            return;
        }
        receiveQueue.counted(stack.statistics(), count, bytes);
        if (r > 0) {
            stack.sendCongestionUpdates(local.getAddress());
        }
        signalSelectors();
    }

    /** Taking a message cleared this socket's port in the local map: tell the peers. Not under the queue's lock. */
    @Override
    public void ownPortCleared() {
        stack.sendCongestionUpdates(local.getAddress());
    }

    /** Sets or clears this socket's port in the local congestion map; under the receive queue's lock. */
    @Override
    public boolean markOwnPort(boolean congested) {
        InetSocketAddress l = local;
        return l != null && stack.markPort(l.getAddress(), l.getPort(), congested);
    }

    /** A peer's congestion map changed: with monitoring on, every monitored bit fires (the kernel over TCP). */
    public void peerCongestionUpdated() {
        long fired = congestion.peerMapChanged();
        if (fired != 0) {
            receiveQueue.addCongestionNotify(fired);
            signalSelectors();
        }
    }

    public boolean monitorsCongestion() {
        return congestion.enabled();
    }

    @Override
    public RdsDatagram receive() throws IOException {
        RdsDatagram d = reader.receive(blocking);
        sentSinceReceive = false;
        return d;
    }

    @Override
    public Optional<RdsDatagram> receive(Duration timeout) throws IOException {
        Objects.requireNonNull(timeout, "timeout is null: pass the longest wait (Duration.ZERO does not wait)");
        Optional<RdsDatagram> d = reader.receive(timeout);
        sentSinceReceive = false;
        return d;
    }

    @Override
    public int receive(ByteBuffer dst, RdsMessageInfo info, int flags) throws IOException {
        Objects.requireNonNull(dst, "dst is null: pass a ByteBuffer with room for the payload");
        Objects.requireNonNull(info, "info is null: pass an RdsMessageInfo to fill in (one may serve every call)");
        int n = reader.receive(dst, info, flags, blocking);
        sentSinceReceive = false;
        return n;
    }

    // ---- caller I/O (busy-poll over TCP, decision 0031; tcp.callerIo, decision 0033) ----
    //
    // A hint kept by the sending and receiving threads without synchronization: with several threads sending on one
    // socket a send may be taken for a reply when it is not, which costs it only a pass of its own.

    /** Whether this socket sent since its last receive returned. */
    private boolean sentSinceReceive;
    /** Whether the send in progress is a reply its own thread writes: the first since the last receive. */
    private boolean sendInCaller;

    @Override
    public boolean sendsInCaller() {
        return sendInCaller;
    }

    @Override
    public boolean pollsForBudget() {
        return busyPoll;
    }

    @Override
    public void pollForBudget() {
        Connection c = lastConnection;
        InetSocketAddress from = local;
        if (c != null && from != null) {
            c.pollForBudget(from.getPort());
        }
    }

    @Override
    public void deliveredBy(ConnectionPath path) {
        receiveQueue.deliveredBy(path);
    }

    @Override
    public boolean isReadable() {
        return receiveQueue.isReadable();
    }

    @Override
    public boolean isWritable() {
        return sendBuffer.hasRoom();
    }

    // ------------------------------------------------------------------------------------------------ selectors

    void addRegistration(CoreSelector.Registration r) {
        registrations.add(r);
    }

    void removeRegistration(CoreSelector.Registration r) {
        registrations.remove(r);
    }

    /** Something changed that may make this socket ready: tell the selectors it is registered with. */
    private void signalSelectors() {
        registrations.signal();
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
        Objects.requireNonNull(option, "option is null: pass one of RdsSocketOptions, such as SO_SNDBUF");
        if (value == null) {
            throw new NullPointerException("value is null: pass " + option + "'s value, a "
                    + option.type().getSimpleName());
        }
        checkOpen();
        options.set(option, value);
        return this;
    }

    @Override
    public <T> T getOption(RdsSocketOption<T> option) throws IOException {
        Objects.requireNonNull(option, "option is null: pass one of RdsSocketOptions, such as SO_SNDBUF");
        checkOpen();
        return options.get(option);
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
    public org.rds4j.core.spi.OffHeapMemory offHeap() {
        return stack.offHeap();
    }

    @Override
    public int sends() {
        return sends;
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
            bound = local;
        } finally {
            lock.unlock();
        }
        mapChanged = receiveQueue.close();
        purgeQueuedMessages();
        sendBuffer.wakeAll();
        if (bound != null) {
            stack.bindTable().unbind(bound.getAddress(), bound.getPort(), this);
            if (mapChanged) {
                stack.sendCongestionUpdates(bound.getAddress());
            }
        }
        stack.socketClosed(this);
        signalSelectors();
    }

    /** Drops this socket's messages from every path of every connection it used, as the kernel does at close. */
    private void purgeQueuedMessages() {
        Map<InetAddress, Connection> p = peers;
        if (p == null) {
            return;
        }
        for (Connection c : p.values()) {
            c.purge(this);
        }
    }

    /** This socket as {@link RdsStack#info()} reports it ({@link Inspection}). */
    public org.rds4j.RdsSocketInfo info() {
        return Inspection.socket(local, options.transportName(), sendBuffer, receiveQueue, congestion);
    }

    @Override
    public void checkOpen() throws EbadfException {
        if (closed) {
            throw new EbadfException("the socket is closed; open a new one");
        }
    }

    @Override
    public String toString() {
        return "RdsSocket[" + (local == null ? "unbound" : local.toString()) + (closed ? ", closed" : "") + "]";
    }
}
