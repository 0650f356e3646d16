package org.rds4j.core.spi;

import java.nio.ByteBuffer;

/**
 * A message's payload that a transport may write from where it lies instead of copying it: the core offers it with
 * {@link FrameSink#write(ByteBuffer, ByteBuffer, PayloadLoan)} for a message whose payload is the message's own
 * direct buffer, and keeps it until the peer acknowledges the message. A transport that still reads the bytes after
 * {@code write} returns (a write queued behind others) borrows them, and gives them back once it no longer reads them.
 *
 * <p>While borrowed, the bytes stay as they are even if the message is acknowledged, cancelled or dropped in the
 * meantime: a message whose buffer is still out when its socket reuses it takes a new buffer instead, and the
 * borrowed one is left to the transport (and then to the garbage collector). That is the kernel's rule too, where the
 * transport holds a reference to a message while TCP may still read its pages. The same payload is never lent to two
 * borrowers at once, and only the borrower calls the other methods, between {@link #borrow()} and
 * {@link #giveBack()}.
 */
public interface PayloadLoan {

    /**
     * Borrows the payload's bytes. Called on the transmitting thread, during {@code write}.
     *
     * @return true if the bytes are now the caller's to read until it gives them back; false if they are out on
     *         loan already, and must be copied
     */
    boolean borrow();

    /**
     * The whole memory of the payload's buffer (the payload lies at the positions {@code write} was given), the same
     * view on every call: a borrower may make its own wrapper of it once and {@linkplain #attach keep} that.
     *
     * @return a direct buffer over the payload buffer's memory; its position and limit are the borrower's to move
     */
    ByteBuffer memory();

    /**
     * What a borrower attached to this payload's buffer, kept from one loan to the next so that lending allocates
     * nothing in steady state.
     *
     * @return the attachment, or {@code null}
     */
    Object attachment();

    /**
     * Keeps {@code attachment} with the payload's buffer for the next borrower (the buffer is reused by later
     * messages of the same socket).
     *
     * @param attachment the borrower's own object, such as its wrapper of {@link #memory()}
     */
    void attach(Object attachment);

    /** Gives the bytes back; any thread, once per successful {@link #borrow()}. */
    void giveBack();
}
