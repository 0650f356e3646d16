package org.rds4j.core.wire;

import java.nio.ByteBuffer;

/**
 * Cuts an RDS byte stream into messages: a 48-byte header, then {@code h_len} payload bytes, then the next header,
 * with no padding, exactly as the kernel's TCP transport reads them. Bytes may arrive split at any offset; the
 * decoder keeps the partial header and payload between calls.
 *
 * <p>The payload goes straight from the caller's buffer into the destination the {@link Listener} provides, so the
 * decoder copies each payload byte once and allocates nothing. Unlike the kernel, which accepts any {@code h_len},
 * the decoder refuses a length above a cap (RDS senders never exceed 1 MiB), so that a corrupt stream cannot make
 * the receiver allocate without bound.
 *
 * <p>Not thread-safe: one decoder per connection, used on that connection's thread.
 */
public final class FrameDecoder {
    /** Where decoded messages go. */
    public interface Listener {
        /**
         * A header is complete: return a buffer with at least {@code header.length()} bytes remaining for the
         * payload, or {@code null} to have the payload skipped. The decoder fills it from its position.
         *
         * @param header the message's header, valid only during this call
         * @return the buffer for the payload, or {@code null} to skip it
         */
        ByteBuffer payloadBuffer(RdsHeader header);

        /**
         * A message is complete. {@code payload} is the buffer from {@link #payloadBuffer}, its position advanced
         * by the payload length, or {@code null} if that returned {@code null}. The header is reused for the next
         * message once this returns.
         *
         * @param header the message's header, reused once this returns
         * @param payload the filled buffer, or {@code null} if the payload was skipped
         * @throws RdsProtocolException if the message breaks the protocol; decoding stops and the stream is dropped
         */
        void onMessage(RdsHeader header, ByteBuffer payload) throws RdsProtocolException;
    }

    private final long maxPayload;
    private final ByteBuffer headerBytes = ByteBuffer.allocate(RdsHeader.SIZE);
    private final RdsHeader header = new RdsHeader();
    private ByteBuffer payload;
    private long payloadRemaining = -1;
    private long messages;

    /** @param maxPayload the largest {@code h_len} accepted */
    public FrameDecoder(long maxPayload) {
        this.maxPayload = maxPayload;
    }

    /**
     * Consumes all remaining bytes of {@code in}, calling the listener for each message completed.
     *
     * @param in the bytes read from the transport; all are consumed
     * @param listener gives the payload buffers and takes the completed messages
     * @throws RdsProtocolException a header announced a payload above the cap; the stream cannot be resumed
     */
    public void decode(ByteBuffer in, Listener listener) throws RdsProtocolException {
        while (in.hasRemaining()) {
            if (payloadRemaining < 0) {
                if (!readHeader(in)) {
                    return;
                }
                long len = header.length();
                if (len > maxPayload) {
                    throw new RdsProtocolException("message " + header + " announces " + len
                            + " payload bytes, more than the " + maxPayload + " any RDS sender produces");
                }
                payload = listener.payloadBuffer(header);
                payloadRemaining = len;
            }
            if (payloadRemaining > 0) {
                int n = (int) Math.min(payloadRemaining, in.remaining());
                if (payload != null) {
                    int limit = in.limit();
                    in.limit(in.position() + n);
                    payload.put(in);
                    in.limit(limit);
                } else {
                    in.position(in.position() + n);
                }
                payloadRemaining -= n;
            }
            if (payloadRemaining == 0) {
                complete(listener);
            }
        }
    }

    /**
     * Where the rest of the current payload goes, for a reader that puts stream bytes there itself: the listener's
     * payload buffer, positioned at the next byte; then {@link #decodedInPlace} says how many it put there.
     *
     * @return the payload buffer, or {@code null} between messages, inside a header, or while a payload is skipped
     */
    public ByteBuffer payloadTarget() {
        return payloadRemaining > 0 ? payload : null;
    }

    /**
     * The payload bytes still to come of the current message.
     *
     * @return 0 between messages or inside a header, else 1 to the announced length
     */
    public int payloadRemaining() {
        return payloadRemaining > 0 ? (int) payloadRemaining : 0;
    }

    /**
     * {@code n} stream bytes were written straight into {@link #payloadTarget()} from its position: moves past them,
     * and completes the message if they were its last.
     *
     * @param n the bytes written, 0 to {@link #payloadRemaining()}
     * @param listener takes the message if it completes
     * @throws RdsProtocolException if the listener refuses the completed message
     */
    public void decodedInPlace(int n, Listener listener) throws RdsProtocolException {
        if (n == 0) {
            return;
        }
        if (n < 0 || n > payloadRemaining() || payload == null) {
            throw new IllegalStateException(n + " bytes written in place with " + payloadRemaining()
                    + " payload bytes expected" + (payload == null ? " and no payload target" : ""));
        }
        payload.position(payload.position() + n);
        payloadRemaining -= n;
        if (payloadRemaining == 0) {
            complete(listener);
        }
    }

    private void complete(Listener listener) throws RdsProtocolException {
        ByteBuffer done = payload;
        payload = null;
        payloadRemaining = -1;
        messages++;
        listener.onMessage(header, done);
    }

    /**
     * Points the rest of the current message's payload at {@code target}, positioned after the bytes already
     * decoded (copied there by whoever took the old buffer back). No effect between messages.
     *
     * @param target the buffer to fill from its position on
     */
    public void redirectPayload(ByteBuffer target) {
        if (payload != null && payloadRemaining > 0) {
            payload = target;
        }
    }

    /** Gathers header bytes; true once all 48 are in and decoded. */
    private boolean readHeader(ByteBuffer in) {
        if (headerBytes.position() == 0 && in.remaining() >= RdsHeader.SIZE) {
            header.decode(in);          // the common case: a whole header in the buffer, no copy
            return true;
        }
        while (headerBytes.hasRemaining() && in.hasRemaining()) {
            headerBytes.put(in.get());
        }
        if (headerBytes.hasRemaining()) {
            return false;
        }
        headerBytes.flip();
        header.decode(headerBytes);
        headerBytes.clear();
        return true;
    }

    /**
     * Whether a message is partly received: the stream stopped inside a header or payload.
     *
     * @return true if the decoder holds part of a message
     */
    public boolean inMessage() {
        return payloadRemaining >= 0 || headerBytes.position() > 0;
    }

    /**
     * Bytes of the current header received so far (0 between messages), as the kernel's {@code hdr_rem} counts.
     *
     * @return 0 to 48; 48 while the payload is being received
     */
    public int headerBytesReceived() {
        return payloadRemaining >= 0 ? RdsHeader.SIZE : headerBytes.position();
    }

    /**
     * The number of messages decoded so far.
     *
     * @return the count since the decoder was made
     */
    public long messages() {
        return messages;
    }
}
