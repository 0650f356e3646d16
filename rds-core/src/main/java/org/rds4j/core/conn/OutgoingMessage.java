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
    long sequence;
    boolean retransmit;
    /** Offset in its connection's byte stream just past its last byte, once written. */
    long streamEnd;

    /**
     * @param payload position 0, limit = length; owned by the message from now on
     * @param owner the sending socket, or {@code null} for messages of the protocol itself (pongs, probes)
     * @param extensions a 16-byte extension area, or {@code null} for none
     */
    public OutgoingMessage(int sourcePort, int destinationPort, ByteBuffer payload, MessageOwner owner,
                           byte[] extensions) {
        this.sourcePort = sourcePort;
        this.destinationPort = destinationPort;
        this.payload = payload;
        this.owner = owner;
        this.extensions = extensions;
    }

    /** A pong answering a ping from {@code pingSourcePort}; a pong to a multipath probe carries our NPATHS. */
    static OutgoingMessage pong(int pingSourcePort, int npaths) {
        byte[] ext = null;
        if (pingSourcePort == ConnectionPath.PROBE_PORT) {
            ext = new byte[RdsHeader.EXTHDR_SIZE];
            ExtensionHeaders.add(ext, ExtensionHeaders.NPATHS, npaths, ExtensionHeaders.AddMode.SINGLE);
        }
        return new OutgoingMessage(0, pingSourcePort, ConnectionPath.EMPTY, null, ext);
    }

    /**
     * A multipath probe ping: from the reserved port 1 to port 0, offering our number of paths. The peer answers
     * with a pong carrying its own, and both use the smaller.
     */
    static OutgoingMessage probe(int npaths) {
        byte[] ext = new byte[RdsHeader.EXTHDR_SIZE];
        ExtensionHeaders.add(ext, ExtensionHeaders.NPATHS, npaths, ExtensionHeaders.AddMode.SINGLE);
        return new OutgoingMessage(ConnectionPath.PROBE_PORT, 0, ConnectionPath.EMPTY, null, ext);
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

    /** Fills {@code h} with this message's header. */
    void header(RdsHeader h) {
        h.clear()
                .sequence(sequence)
                .length(payload.limit())
                .sourcePort(sourcePort)
                .destinationPort(destinationPort)
                .flags(retransmit ? RdsHeader.FLAG_RETRANSMITTED : 0);
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
