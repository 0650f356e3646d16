package org.rds4j.core.path;

import java.nio.ByteBuffer;
import org.rds4j.core.spi.FrameSink;
import org.rds4j.core.spi.PayloadLoan;
import org.rds4j.core.wire.ExtensionHeaders;
import org.rds4j.core.wire.HeaderEncoder;
import org.rds4j.core.wire.RdsHeader;

/**
 * A message queued on a connection path: the kernel's {@code rds_message}. It keeps its sequence number for life, so
 * that a resend after a path reset carries the original number and the receiver can drop what it already has.
 *
 * <p>Data messages are pooled by their socket and reused (see {@link MessageOwner#released}): one owner at a time,
 * first the sending thread that fills it, then the path from {@link ConnectionPath#enqueue} until the peer has it,
 * then the socket's pool again. Protocol messages (pongs, probes, pings, ack-only) are made by the path itself.
 */
public final class OutgoingMessage {
    int sourcePort;
    int destinationPort;
    /** Position 0, limit = length: the message's own buffer, or for a zero-copy send a view of the caller's. */
    ByteBuffer payload;
    /**
     * A pooled message's own buffer, reused with the message (kept aside while the payload is the caller's), unless
     * a transport still has it on loan when the message is filled again.
     */
    private MessageBuffer own;
    /** Sent with {@code sendZeroCopy}: the payload is the caller's, and {@link #cookie} is reported when done. */
    boolean zeroCopy;
    /** How a zero-copy payload is lent to the transport; reused with the message unless still lent. */
    private ZeroCopyLoan zeroCopyLoan;
    int cookie;
    MessageOwner owner;
    byte[] extensions;
    /** Kept until the peer acknowledges it, and sent again after a reset; only ack-only messages are not. */
    boolean retained;
    /** Ask an acknowledging peer to acknowledge at once (the sender's buffer is more than half full). */
    boolean ackRequired;
    /** One of the stack's acknowledgement pings: worthless after a reset, so never resent. */
    boolean ackPing;
    /** A pong: the path counts those it holds, so that a peer that pings and never acknowledges is bounded. */
    boolean pong;
    long sequence;
    boolean retransmit;
    /** The link in a path's inbox (application threads push, the path takes them all at once). */
    OutgoingMessage next;
    /** Payloads up to this size may travel in runs ({@link MessageRun}). */
    public static final int RUN_ENTRY_MAX = MessageRun.ENTRY_MAX;
    /** The largest buffer a run grows to. */
    public static final int RUN_MAX_BYTES = MessageRun.MAX_BYTES;
    /** {@link #append} took the message. */
    public static final int APPENDED = MessageRun.APPENDED;
    /** {@link #append} found the run open but its buffer full. */
    public static final int RUN_FULL = MessageRun.FULL;

    /** This entry carries a run of small messages ({@link MessageRun}), numbered from {@link #sequence} on. */
    boolean isRun;
    /** The run storage, kept with the message for its next run once it has carried one. */
    private MessageRun run;

    /** An empty message for a socket's pool; {@link #fill} makes it a data message. */
    public OutgoingMessage() {
    }

    /**
     * A data message that is not pooled, kept until the peer acknowledges it.
     *
     * @param sourcePort the sending socket's RDS port, 0 to 65535 (h_sport)
     * @param destinationPort the receiving socket's RDS port, 0 to 65535 (h_dport)
     * @param payload position 0, limit = length; owned by the message from now on
     * @param owner the sending socket, or {@code null} for messages of the protocol itself (pongs, probes)
     * @param extensions a 16-byte extension area, or {@code null} for none
     * @param ackRequired ask an acknowledging peer to acknowledge at once (the sender's buffer is over half full)
     */
    public OutgoingMessage(int sourcePort, int destinationPort, ByteBuffer payload, MessageOwner owner,
                           byte[] extensions, boolean ackRequired) {
        this(sourcePort, destinationPort, payload, owner, extensions, true, ackRequired, false);
    }

    private OutgoingMessage(int sourcePort, int destinationPort, ByteBuffer payload, MessageOwner owner,
                            byte[] extensions, boolean retained, boolean ackRequired, boolean ackPing) {
        this.sourcePort = sourcePort;
        this.destinationPort = destinationPort;
        this.payload = payload;
        this.owner = owner;
        this.extensions = extensions;
        this.retained = retained;
        this.ackRequired = ackRequired;
        this.ackPing = ackPing;
    }

    /**
     * Makes this (pooled) message a data message carrying a copy of {@code data}'s remaining bytes; {@code data}'s
     * position is left unchanged. The message's buffer is reused when large enough, so steady traffic allocates
     * nothing. It asks for no prompt acknowledgement until {@link #askForAck} says so.
     *
     * @param sourcePort the sending socket's RDS port, 0 to 65535
     * @param destinationPort the receiving socket's RDS port, 0 to 65535
     * @param data the bytes to send, copied
     * @param owner the sending socket, told when the message is released
     * @return this message
     */
    public OutgoingMessage fill(int sourcePort, int destinationPort, ByteBuffer data, MessageOwner owner) {
        copyIn(data, data.remaining(), owner).limit(data.remaining());
        return init(sourcePort, destinationPort, owner);
    }

    /**
     * Copies {@code data}'s remaining bytes to the start of the message's own buffer, reused if it holds at least
     * {@code capacity} bytes and is not lent, and makes it the payload; {@code data}'s position is left unchanged.
     *
     * @return the buffer, its limit at its capacity
     */
    private ByteBuffer copyIn(ByteBuffer data, int capacity, MessageOwner owner) {
        MessageBuffer o = own;
        if (o == null || o.bytes.capacity() < capacity || o.isLent()) {
            if (o != null) {
                o.free();
            }
            o = new MessageBuffer(capacityFor(capacity), owner != null ? owner.offHeap() : null);
            own = o;
        }
        ByteBuffer p = o.bytes;
        p.clear();
        p.put(0, data, data.position(), data.remaining());
        this.payload = p;
        this.zeroCopy = false;
        this.cookie = 0;
        return p;
    }

    /**
     * Makes this (pooled) message the first of a run ({@link MessageRun}): a copy of {@code data}'s remaining bytes
     * in a buffer of at least {@code capacity} bytes, to which the same sender may append more messages to the same
     * port until the path takes the entry in. {@code data}'s position is left unchanged.
     *
     * @param sourcePort the sending socket's RDS port, 0 to 65535
     * @param destinationPort the receiving socket's RDS port, 0 to 65535
     * @param data the bytes of the first message, copied
     * @param owner the sending socket, told when the messages are released
     * @param capacity the buffer size the run may fill
     * @return this message
     */
    public OutgoingMessage fillRun(int sourcePort, int destinationPort, ByteBuffer data, MessageOwner owner,
                                   int capacity) {
        ByteBuffer p = copyIn(data, capacity, owner);         // limit = capacity: appends write past the first message
        init(sourcePort, destinationPort, owner);
        if (run == null) {
            run = new MessageRun();
        }
        run.start(p, data.remaining());
        isRun = true;
        return this;
    }

    /**
     * Appends one more message to this run, unless the path has taken it in, it is full, or it is not a run. Only
     * the socket's one appending sender calls this.
     *
     * @param data the payload, copied; its position is left unchanged
     * @param askForAck whether the sender's budget was at least half full
     * @return {@link #APPENDED}; {@link #RUN_FULL} if the run was still open but its buffer had no room (larger runs
     *         would have carried more); anything else if the path has taken it in or it is not a run
     */
    public int append(ByteBuffer data, boolean askForAck) {
        return isRun ? run.append(payload, data, askForAck) : MessageRun.TAKEN;
    }

    /** The path takes the entry in: no more appends. Returns how many messages it carries. */
    int seal() {
        return isRun ? run.seal() : 1;
    }

    /**
     * How many messages the entry carries.
     *
     * @return 1, or a run's count (so far, while it may still grow in the inbox)
     */
    public int entries() {
        return isRun ? run.count() : 1;
    }

    /** The sequence number of the entry's last message. */
    long lastSequence() {
        return isRun ? sequence + run.count() - 1 : sequence;
    }

    /**
     * The payload length of message {@code i} of the entry.
     *
     * @param i 0 to {@link #entries()} - 1
     * @return h_len of that message
     */
    public int length(int i) {
        return isRun ? run.length(i) : payload.limit();
    }

    /** Writes the entry's frames: the message, or each message of a run. */
    void writeTo(FrameSink sink, HeaderEncoder e, long ack, boolean askForAck) {
        if (isRun) {
            run.write(sink, e, sequence, ack, sourcePort, destinationPort, retransmit, askForAck, ackRequired);
        } else {
            encodeHeader(e, ack, askForAck);
            sink.write(e.buffer(), payload, loan());
        }
    }

    /**
     * Makes this (pooled) message a zero-copy data message: its payload is {@code lent}, a view of the caller's
     * bytes (position 0, limit = length), not a copy; {@code cookie} goes back to the caller when the path is done.
     * It asks for no prompt acknowledgement until {@link #askForAck} says so.
     *
     * @param sourcePort the sending socket's RDS port, 0 to 65535
     * @param destinationPort the receiving socket's RDS port, 0 to 65535
     * @param lent the caller's bytes, which must stay unchanged until the cookie is reported
     * @param cookie the caller's number for this send, reported back when done
     * @param owner the sending socket, told when the message is released
     * @return this message
     */
    public OutgoingMessage fillZeroCopy(int sourcePort, int destinationPort, ByteBuffer lent, int cookie,
                                        MessageOwner owner) {
        ZeroCopyLoan z = zeroCopyLoan;
        if (z == null || z.isLent()) {
            z = new ZeroCopyLoan();
            zeroCopyLoan = z;
        }
        z.set(lent, cookie, owner);
        this.payload = lent;
        this.zeroCopy = true;
        this.cookie = cookie;
        return init(sourcePort, destinationPort, owner);
    }

    /**
     * Sets whether the message asks an acknowledging peer to acknowledge at once: known only once the send budget has
     * taken it, which is after the payload was copied in.
     *
     * @param ask true if the sender's buffer was at least half full
     */
    public void askForAck(boolean ask) {
        this.ackRequired = ask;
    }

    /**
     * Whether the message was sent with {@code sendZeroCopy}; {@link #cookie()} is then the caller's number.
     *
     * @return true if the payload is the caller's memory, not a copy
     */
    public boolean isZeroCopy() {
        return zeroCopy;
    }

    /**
     * The caller's number for a zero-copy send, reported back when the path is done with the payload.
     *
     * @return the cookie, 0 for a message that is not zero-copy
     */
    public int cookie() {
        return cookie;
    }

    /**
     * This zero-copy message is done with (the peer has it, or it was dropped): whether its cookie may be reported
     * now.
     *
     * @return true to report it now; false if the transport still reads the caller's bytes, in which case it reports
     *         the cookie through {@link MessageOwner#zeroCopyCompleted} when it gives them back
     */
    public boolean completeZeroCopy() {
        return zeroCopyLoan.completeUnlessLent();
    }

    /** Forgets a lent payload, so the pool holds no reference to the caller's memory. */
    public void returnLentPayload() {
        if (zeroCopy) {
            payload = own == null ? null : own.bytes;
            zeroCopy = false;
            zeroCopyLoan.forgetIfIdle();
        }
    }

    /**
     * How a transport may borrow the payload instead of copying it: a filled message's own direct buffer, or a
     * zero-copy send's direct memory, from {@value MessageBuffer#DIRECT_MIN} bytes.
     *
     * @return the loan, or {@code null} if the payload must be copied (heap memory, small, shared)
     */
    PayloadLoan loan() {
        if (zeroCopy) {
            boolean lendable = payload.isDirect() && !payload.isReadOnly() && payload.limit() >= MessageBuffer.DIRECT_MIN;
            return lendable ? zeroCopyLoan : null;
        }
        MessageBuffer o = own;
        return o != null && payload == o.bytes && o.lendable() ? o : null;
    }

    private OutgoingMessage init(int sourcePort, int destinationPort, MessageOwner owner) {
        this.sourcePort = sourcePort;
        this.destinationPort = destinationPort;
        this.owner = owner;
        this.extensions = null;
        this.retained = true;
        this.ackRequired = false;
        this.ackPing = false;
        this.sequence = 0;
        this.retransmit = false;
        this.next = null;
        if (isRun) {
            isRun = false;
            run.close();                              // a stale appender's reservation fails from here on
        }
        return this;
    }


    /** Buffer sizes round up to a power of two, at least 64 bytes, so reuse finds a fit for similar sizes. */
    static int capacityFor(int len) {
        if (len <= 64) {
            return 64;
        }
        int c = Integer.highestOneBit(len - 1) << 1;
        return c < 0 ? len : c;
    }


    /**
     * A pong answering a ping from {@code pingSourcePort}; a pong to a multipath probe carries our NPATHS,
     * generation and SPORT_IDX, as later kernels send them (a 6.1 kernel reads the first two).
     */
    static OutgoingMessage pong(int pingSourcePort, int npaths, long generation) {
        byte[] ext = pingSourcePort == ConnectionPath.PROBE_PORT ? handshake(npaths, generation) : null;
        OutgoingMessage m = new OutgoingMessage(0, pingSourcePort, ConnectionPath.EMPTY, null, ext, true, false, false);
        m.pong = true;
        return m;
    }

    /** An ordinary ping from one of the stack's reserved ports: its pong acknowledges all sent before it. */
    static OutgoingMessage ping(int sourcePort) {
        return new OutgoingMessage(sourcePort, 0, ConnectionPath.EMPTY, null, null, true, false, true);
    }

    /** Carries only h_ack, from port 0 to port 0: a kernel would ignore it, and only rds4j peers get one. */
    static OutgoingMessage ackOnly() {
        return new OutgoingMessage(0, 0, ConnectionPath.EMPTY, null, null, false, false, false);
    }

    private static byte[] handshake(int npaths, long generation) {
        byte[] ext = new byte[RdsHeader.EXTHDR_SIZE];
        ExtensionHeaders.add(ext, ExtensionHeaders.NPATHS, npaths, ExtensionHeaders.AddMode.APPEND);
        ExtensionHeaders.add(ext, ExtensionHeaders.GEN_NUM, generation, ExtensionHeaders.AddMode.APPEND);
        // Our connecting ports encode path indexes (kernels from 7.0 do the same and say so with this entry; 6.1
        // reads it as an entry without payload, and the dummy byte that follows as the end of the list).
        ExtensionHeaders.add(ext, ExtensionHeaders.SPORT_IDX, 0, ExtensionHeaders.AddMode.APPEND);
        return ext;
    }

    /**
     * A multipath probe ping: from the reserved port 1 to port 0, offering our number of paths. The peer answers
     * with a pong carrying its own, and both use the smaller.
     */
    static OutgoingMessage probe(int npaths, long generation) {
        return new OutgoingMessage(ConnectionPath.PROBE_PORT, 0, ConnectionPath.EMPTY, null,
                handshake(npaths, generation), true, false, false);
    }

    /**
     * The payload length, h_len; for a run, its messages' lengths together.
     *
     * @return the payload size in bytes, header excluded
     */
    public int length() {
        return isRun ? (int) run.bytes() : payload.limit();
    }

    /**
     * The sending socket's RDS port, h_sport.
     *
     * @return the RDS port, 0 to 65535 (0 for the protocol's own pongs)
     */
    public int sourcePort() {
        return sourcePort;
    }

    /**
     * The receiving socket's RDS port, h_dport.
     *
     * @return the RDS port, 0 to 65535 (0 for pings and probes)
     */
    public int destinationPort() {
        return destinationPort;
    }

    /**
     * The socket that sent the message.
     *
     * @return the owner, or {@code null} for messages of the protocol itself
     */
    public MessageOwner owner() {
        return owner;
    }

    /**
     * The sequence number the path gave the message, kept across resends.
     *
     * @return h_sequence, unsigned 64-bit; 0 until the message is enqueued
     */
    public long sequence() {
        return sequence;
    }

    /**
     * The next message in a released chain ({@link MessageOwner#released}).
     *
     * @return the next message, or {@code null} at the end of the chain
     */
    public OutgoingMessage next() {
        return next;
    }

    /**
     * Encodes this message's header.
     *
     * @param e the transmitter's encoder, whose buffer then holds the 48 bytes
     * @param ack the cumulative acknowledgement to carry (h_ack)
     * @param askForAck whether to set ACK_REQUIRED (only towards peers known to acknowledge)
     */
    void encodeHeader(HeaderEncoder e, long ack, boolean askForAck) {
        int flags = (retransmit ? RdsHeader.FLAG_RETRANSMITTED : 0)
                | (askForAck && ackRequired ? RdsHeader.FLAG_ACK_REQUIRED : 0);
        e.encode(sequence, ack, payload.limit(), sourcePort, destinationPort, flags, extensions);
    }

    @Override
    public String toString() {
        return "OutgoingMessage[seq=" + Long.toUnsignedString(sequence) + ", " + sourcePort + "->" + destinationPort
                + ", " + (payload == null ? 0 : length()) + " bytes" + (isRun ? " in " + entries() + " messages" : "")
                + (retransmit ? ", retransmit" : "") + "]";
    }
}
