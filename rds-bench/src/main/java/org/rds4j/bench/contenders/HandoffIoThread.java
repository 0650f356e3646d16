package org.rds4j.bench.contenders;

import java.io.EOFException;
import java.io.IOException;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.util.concurrent.TimeUnit;

/**
 * The I/O thread of one side of a {@link HandoffNioContender} link: it alone uses the channel. Each turn it takes
 * every message the application handed over, packs them (4-byte length, then the bytes) into writes of up to 64 KiB,
 * and reads what the channel has into a 256 KiB buffer, copying each whole message into the incoming ring. This is
 * rds4j's threading with the protocol taken out: an owning I/O thread per connection, a transmit pass that gathers
 * whatever the senders queued, a read batch delivered to the reader with one wake-up.
 *
 * <p>Idle, it waits as rds4j's TCP I/O threads do: polling, yielding between turns, for {@value #YIELD_MICROS} µs
 * after its last work, then sleeping in {@code select} until the channel is readable or a sender wakes it; with
 * {@code spin} it never sleeps.
 */
final class HandoffIoThread extends Thread {
    /** rds4j's default {@code tcp.yieldMicros}. */
    static final long YIELD_MICROS = 250;
    private static final int WRITE_SIZE = 64 * 1024;
    private static final int READ_SIZE = 256 * 1024;
    private static final long SELECT_MILLIS = 100;

    private final SocketChannel channel;
    private final HandoffRing outgoing;
    private final HandoffRing incoming;
    private final HandoffLinkState state;
    private final boolean spin;
    private final Selector selector;
    private final ByteBuffer out = ByteBuffer.allocateDirect(WRITE_SIZE);
    private final ByteBuffer in = ByteBuffer.allocateDirect(READ_SIZE).flip();
    private final ByteBuffer header = ByteBuffer.allocateDirect(4);
    private final ByteBuffer[] gather = new ByteBuffer[2];
    /** A message larger than the read buffer being read straight into its slot, or {@code null}. */
    private ByteBuffer partial;
    private volatile boolean sleeping;

    HandoffIoThread(String name, SocketChannel channel, HandoffRing outgoing, HandoffRing incoming,
            HandoffLinkState state, boolean spin) throws IOException {
        super(name);
        setDaemon(true);
        this.channel = channel;
        this.outgoing = outgoing;
        this.incoming = incoming;
        this.state = state;
        this.spin = spin;
        channel.configureBlocking(false);
        this.selector = Selector.open();
        channel.register(selector, SelectionKey.OP_READ);
    }

    /** Called by a sender after it handed a message over: wakes this thread if it sleeps in {@code select}. */
    void wakeIfSleeping() {
        if (spin) {
            return;                                  // never sleeps
        }
        // The hand-over was a release store: the fence orders it before this read, against this thread, which says
        // it sleeps and then looks at the ring once more (otherwise both could miss each other for a whole select).
        VarHandle.fullFence();
        if (sleeping) {
            selector.wakeup();
        }
    }

    @Override
    public void run() {
        long idleSince = System.nanoTime();
        try {
            while (!state.closed()) {
                boolean worked = transmit();
                worked |= receive();
                if (worked) {
                    idleSince = System.nanoTime();
                } else if (spin || System.nanoTime() - idleSince < TimeUnit.MICROSECONDS.toNanos(YIELD_MICROS)
                        || incoming.full()) {
                    Thread.yield();
                } else {
                    sleep();
                    idleSince = System.nanoTime();
                }
            }
        } catch (IOException e) {
            if (!state.closed()) {
                state.fail(e);
            }
        } finally {
            incoming.wakeAll();
            outgoing.wakeAll();
            try {
                selector.close();
            } catch (IOException ignored) {
                // nothing left to do with it
            }
        }
    }

    private void sleep() throws IOException {
        sleeping = true;
        // Checked again after saying so: a sender that handed over before it saw the flag is seen here.
        if (outgoing.peek() == null) {
            selector.select(SELECT_MILLIS);
            selector.selectedKeys().clear();
        }
        sleeping = false;
    }

    /** One pass: everything handed over, packed into writes of up to 64 KiB. */
    private boolean transmit() throws IOException {
        boolean any = false;
        ByteBuffer m;
        while ((m = outgoing.peek()) != null) {
            int len = m.remaining();
            if (out.remaining() < 4 + len) {
                write(out.flip());
                out.clear();
            }
            if (4 + len <= out.capacity()) {
                out.putInt(len);
                out.put(m);
            } else {
                header.clear();
                header.putInt(len).flip();
                gather[0] = header;
                gather[1] = m;
                while (m.hasRemaining()) {
                    if (channel.write(gather) == 0) {
                        waitForRoom();
                    }
                }
                gather[1] = null;
            }
            outgoing.free();
            any = true;
        }
        if (out.position() > 0) {
            write(out.flip());
            out.clear();
        }
        if (any) {
            outgoing.wakeProducer();
        }
        return any;
    }

    private void write(ByteBuffer b) throws IOException {
        while (b.hasRemaining()) {
            if (channel.write(b) == 0) {
                waitForRoom();
            }
        }
    }

    /** The socket is full: keep reading meanwhile (the peer may be writing too), yield, and give up if closed. */
    private void waitForRoom() throws IOException {
        state.check();
        receive();
        Thread.yield();
    }

    /** One read, and every whole message in it handed to the reader; false if there was nothing to read. */
    private boolean receive() throws IOException {
        boolean any = false;
        if (partial != null) {
            if (read(partial) == 0) {
                return false;
            }
            any = true;
            if (partial.hasRemaining()) {
                return true;
            }
            partial = null;
            incoming.publish();
        } else {
            in.compact();
            int n = read(in);
            in.flip();
            any = n > 0;
        }
        while (partial == null && in.remaining() >= 4) {
            ByteBuffer slot = incoming.tryClaim();
            if (slot == null) {
                break;                              // the reader is behind: the rest stays in the socket
            }
            int len = in.getInt(in.position());
            if (len < 0 || len > slot.capacity()) {
                throw new IOException("a message of " + len + " bytes does not fit in a slot of "
                        + slot.capacity());
            }
            if (in.remaining() - 4 >= len) {
                in.position(in.position() + 4);
                NioEndpoint.copy(in, slot, len);
                incoming.publish();
            } else if (4 + len > in.capacity()) {
                in.position(in.position() + 4);     // larger than the buffer: the rest goes straight into the slot
                NioEndpoint.copy(in, slot, in.remaining());
                slot.limit(len);
                partial = slot;
            } else {
                break;                              // its end is still in the socket
            }
            any = true;
        }
        if (any) {
            incoming.wakeConsumer();
        }
        return any;
    }

    private int read(ByteBuffer b) throws IOException {
        int n = channel.read(b);
        if (n < 0) {
            throw new EOFException("the peer closed the connection");
        }
        return n;
    }
}
