package org.rds4j.transport.tcp;

import io.netty.channel.Channel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.unix.FileDescriptor;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;

/**
 * The socket under a Netty channel, as an application thread reads and writes it under caller I/O (busy-poll and
 * {@code tcp.callerIo}, docs/threading.md): non-blocking, one thread at a time, and only inside the connection's
 * gate ({@link TcpConnection#enterCallerIo}), which the event loop shuts before anything closes the channel. The
 * gate is what makes an epoll channel's descriptor safe to use outside its event loop: a descriptor number that the
 * loop closed may belong to another socket a moment later.
 */
abstract class CallerSocket {
    /** Reads into {@code dst} from its position: the count, 0 if nothing waits, -1 at the end of the stream. */
    abstract int read(ByteBuffer dst) throws IOException;

    /** Writes {@code src} from its position: the count taken, 0 if the socket's buffer is full. */
    abstract int write(ByteBuffer src) throws IOException;

    /** The socket under {@code channel} for caller I/O, or {@code null} if its kind has none to offer. */
    static CallerSocket of(Channel channel) {
        if (channel instanceof EpollSocketChannel e) {
            return new Descriptor(e.fd());
        }
        if (channel instanceof CallerIoSocketChannel c) {
            return new Jdk(c.jdkChannel());
        }
        return null;
    }

    /** Netty's epoll descriptor, read and written with {@code read(2)} and {@code write(2)}. */
    private static final class Descriptor extends CallerSocket {
        private final FileDescriptor fd;

        Descriptor(FileDescriptor fd) {
            this.fd = fd;
        }

        @Override
        int read(ByteBuffer dst) throws IOException {
            assert dst.isDirect() : "the native read takes direct memory only";
            return advance(dst, fd.read(dst, dst.position(), dst.limit())); // 0 for EAGAIN, -1 at the end
        }

        @Override
        int write(ByteBuffer src) throws IOException {
            assert src.isDirect() : "the native write takes direct memory only";
            return advance(src, fd.write(src, src.position(), src.limit()));
        }

        /** Netty's calls take positions and leave the buffer as it was: moves it past the {@code n} bytes done. */
        private static int advance(ByteBuffer b, int n) {
            if (n > 0) {
                b.position(b.position() + n);
            }
            return n;
        }
    }

    /** The JDK channel under Netty's NIO one (without epoll: {@code tcp.native=false}, or not Linux). */
    private static final class Jdk extends CallerSocket {
        private final SocketChannel ch;

        Jdk(SocketChannel ch) {
            this.ch = ch;
        }

        @Override
        int read(ByteBuffer dst) throws IOException {
            return ch.read(dst);
        }

        @Override
        int write(ByteBuffer src) throws IOException {
            return ch.write(src);
        }
    }
}
