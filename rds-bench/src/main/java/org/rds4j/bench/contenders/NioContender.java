package org.rds4j.bench.contenders;

import java.io.IOException;
import org.rds4j.bench.Contender;
import org.rds4j.bench.Endpoint;
import org.rds4j.bench.Link;

/**
 * The physical reference: one TCP connection on 127.0.0.1 between two blocking {@link SocketChannel}s, each message
 * preceded by a 4-byte length. Packed, messages are gathered into writes of up to 64 KiB (what the machine can do
 * when nobody pays per message); unpacked, every message is one gathering write (what a syscall per message costs).
 * Spinning, the channels are non-blocking and packed, and every thread retries its read or write until it moves
 * something instead of sleeping: the reference for rds4j's busy-poll mode.
 */
public final class NioContender implements Contender {
    private final boolean packed;
    private final boolean spin;

    /** Blocking channels, packed or one write per message. */
    public NioContender(boolean packed) {
        this(packed, false);
    }

    private NioContender(boolean packed, boolean spin) {
        this.packed = packed;
        this.spin = spin;
    }

    /** Non-blocking channels, packed writes, and threads that spin on reads and writes instead of sleeping. */
    public static NioContender spinning() {
        return new NioContender(true, true);
    }

    @Override
    public String name() {
        return spin ? "nio-spin" : packed ? "nio-packed" : "nio-per-msg";
    }

    @Override
    public String description() {
        if (spin) {
            return "non-blocking SocketChannel pair on 127.0.0.1, 4-byte length prefix, messages packed into writes "
                    + "of up to 64 KiB, every read and write retried at once (Thread.onSpinWait) until it moves "
                    + "something: busy-spinning";
        }
        return packed
                ? "blocking SocketChannel pair on 127.0.0.1, 4-byte length prefix, messages packed into writes of up "
                        + "to 64 KiB"
                : "blocking SocketChannel pair on 127.0.0.1, 4-byte length prefix, one write per message";
    }

    @Override
    public Link open(int maxMessageSize) throws IOException {
        return LoopbackSocketPair.open((a, b) -> new NioLink(new NioEndpoint(a, packed, spin),
                new NioEndpoint(b, packed, spin)));
    }

    private record NioLink(NioEndpoint a, NioEndpoint b) implements Link {
        @Override
        public void close() {
            a.close();
            b.close();
        }
    }
}
