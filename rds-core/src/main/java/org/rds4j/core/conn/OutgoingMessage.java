package org.rds4j.core.conn;

import java.nio.ByteBuffer;
import org.rds4j.core.wire.ExtensionHeaders;
import org.rds4j.core.wire.RdsHeader;

/**
 * A message queued on a connection path: the kernel's {@code rds_message}. It keeps its sequence number for life, so
 * that a resend after a path reset carries the original number and the receiver can drop what it already has.
 */
public final class OutgoingMessage {
    final int sourcePort;
    final int destinationPort;
    final ByteBuffer payload;
    final MessageOwner owner;
    final byte[] extensions;
    /** Kept until the peer acknowledges it, and sent again after a reset; only ack-only messages are not. */
    final boolean retained;
    /** Ask an acknowledging peer to acknowledge at once (the sender's buffer is more than half full). */
    final boolean ackRequired;
    /** One of the stack's acknowledgement pings: worthless after a reset, so never resent. */
    final boolean ackPing;
    long sequence;
    boolean retransmit;

    /**
     * @param payload position 0, limit = length; owned by the message from now on
     * @param owner the sending socket, or {@code null} for messages of the protocol itself (pongs, probes)
     * @param extensions a 16-byte extension area, or {@code null} for none
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
     * A pong answering a ping from {@code pingSourcePort}; a pong to a multipath probe carries our NPATHS and
     * generation, as later kernels send them (a 6.1 kernel reads both).
     */
    static OutgoingMessage pong(int pingSourcePort, int npaths, long generation) {
        byte[] ext = pingSourcePort == ConnectionPath.PROBE_PORT ? handshake(npaths, generation) : null;
        return new OutgoingMessage(0, pingSourcePort, ConnectionPath.EMPTY, null, ext, true, false, false);
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

    public int length() {
        return payload.limit();
    }

    public int sourcePort() {
        return sourcePort;
    }

    public int destinationPort() {
        return destinationPort;
    }

    public MessageOwner owner() {
        return owner;
    }

    public long sequence() {
        return sequence;
    }

    /**
     * Fills {@code h} with this message's header.
     *
     * @param ack the cumulative acknowledgement to carry (h_ack)
     * @param askForAck whether to set ACK_REQUIRED (only towards peers known to acknowledge)
     */
    void header(RdsHeader h, long ack, boolean askForAck) {
        int flags = (retransmit ? RdsHeader.FLAG_RETRANSMITTED : 0)
                | (askForAck && ackRequired ? RdsHeader.FLAG_ACK_REQUIRED : 0);
        h.clear()
                .sequence(sequence)
                .ack(ack)
                .length(payload.limit())
                .sourcePort(sourcePort)
                .destinationPort(destinationPort)
                .flags(flags);
        if (extensions != null) {
            System.arraycopy(extensions, 0, h.extensions(), 0, RdsHeader.EXTHDR_SIZE);
        }
    }

    @Override
    public String toString() {
        return "OutgoingMessage[seq=" + Long.toUnsignedString(sequence) + ", " + sourcePort + "->" + destinationPort
                + ", " + payload.limit() + " bytes" + (retransmit ? ", retransmit" : "") + "]";
    }
}
