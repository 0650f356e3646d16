package org.rds4j.transport.tcp;

import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.EventLoop;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.util.concurrent.EventExecutor;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadFactory;
import org.rds4j.core.spi.IoThread;

/**
 * A stack's TCP I/O threads, where every channel between the same two addresses lives on the same thread: the
 * core's connection to a peer is owned by one thread ({@link org.rds4j.core.spi.TransportInstance#ioThread}), so
 * the channels of all its paths, those we open and those we accept, must be served by that thread. Channels we open
 * are registered on the pair's loop by the bootstrap ({@link #loop}); channels we accept reach the group through
 * {@link #register(Channel)}, which places them by their addresses instead of round-robin.
 */
final class PeerAffineLoopGroup extends MultiThreadIoEventLoopGroup {
    private final EventLoop[] loops;
    private final IoThread[] ioThreads;

    PeerAffineLoopGroup(int threads, ThreadFactory threadFactory, IoHandlerFactory ioHandler) {
        super(threads, threadFactory, ioHandler);
        List<EventLoop> all = new ArrayList<>();
        for (EventExecutor e : this) {
            all.add((EventLoop) e);
        }
        this.loops = all.toArray(new EventLoop[0]);
        this.ioThreads = new IoThread[loops.length];
        for (int i = 0; i < loops.length; i++) {
            EventLoop loop = loops[i];
            ioThreads[i] = new IoThread() {
                @Override
                public boolean inThread() {
                    return loop.inEventLoop();
                }

                @Override
                public void execute(Runnable task) {
                    loop.execute(task);              // RejectedExecutionException once the group has terminated
                }

                @Override
                public String toString() {
                    return "IoThread[" + loop + "]";
                }
            };
        }
    }

    /** The loop that serves every channel between {@code local} and {@code peer}. */
    EventLoop loop(InetAddress local, InetAddress peer) {
        return loops[index(local, peer)];
    }

    /** The same loop, as the core sees it. */
    IoThread ioThread(InetAddress local, InetAddress peer) {
        return ioThreads[index(local, peer)];
    }

    private int index(InetAddress local, InetAddress peer) {
        if (loops.length == 1) {
            return 0;
        }
        int h = local.hashCode() * 31 + peer.hashCode();
        h ^= h >>> 16;
        return Math.floorMod(h, loops.length);
    }

    /** An accepted channel goes to its pair's loop; a listener (no peer) round-robin, as usual. */
    @Override
    public ChannelFuture register(Channel channel) {
        SocketAddress local = channel.localAddress();
        SocketAddress remote = channel.remoteAddress();
        if (local instanceof InetSocketAddress && remote instanceof InetSocketAddress) {
            return loop(((InetSocketAddress) local).getAddress(), ((InetSocketAddress) remote).getAddress())
                    .register(channel);
        }
        return super.register(channel);
    }
}
