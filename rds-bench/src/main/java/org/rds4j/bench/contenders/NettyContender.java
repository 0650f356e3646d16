package org.rds4j.bench.contenders;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;
import io.netty.handler.codec.LengthFieldPrepender;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import org.rds4j.bench.Contender;
import org.rds4j.bench.Link;

/**
 * What a Java team writes by hand on Netty 4.2: one TCP connection on 127.0.0.1, {@link LengthFieldPrepender} and
 * {@link LengthFieldBasedFrameDecoder} with a 4-byte length, the pooled allocator, one {@code writeAndFlush} per
 * message. Epoll where it loads, NIO otherwise, as rds4j's TCP transport does; one event loop thread per side, as two
 * hosts would have.
 */
public final class NettyContender implements Contender {
    private static final long SETUP_TIMEOUT_SECONDS = 10;

    @Override
    public String name() {
        return "netty";
    }

    @Override
    public String description() {
        return "Netty 4.2 TCP on 127.0.0.1 (" + (Epoll.isAvailable() ? "epoll" : "nio")
                + "), LengthFieldPrepender/LengthFieldBasedFrameDecoder, pooled allocator, one writeAndFlush per "
                + "message";
    }

    @Override
    public Link open(int maxMessageSize) throws Exception {
        boolean epoll = Epoll.isAvailable();
        IoHandlerFactory io = epoll ? EpollIoHandler.newFactory() : NioIoHandler.newFactory();
        Class<? extends ServerChannel> serverClass = epoll ? EpollServerSocketChannel.class
                : NioServerSocketChannel.class;
        Class<? extends SocketChannel> clientClass = epoll ? EpollSocketChannel.class : NioSocketChannel.class;
        EventLoopGroup groupA = new MultiThreadIoEventLoopGroup(1, new DefaultThreadFactory(NettyLink.PREFIX_A), io);
        EventLoopGroup groupB = new MultiThreadIoEventLoopGroup(1, new DefaultThreadFactory(NettyLink.PREFIX_B), io);
        int maxFrame = Math.max(maxMessageSize, Long.BYTES);
        NettyEndpoint a = new NettyEndpoint(maxFrame);
        NettyEndpoint b = new NettyEndpoint(maxFrame);
        NettyLink link = new NettyLink(groupA, groupB, a, b);
        try {
            ServerBootstrap server = new ServerBootstrap()
                    .group(groupB)
                    .channel(serverClass)
                    .option(ChannelOption.ALLOCATOR, PooledByteBufAllocator.DEFAULT)
                    .childOption(ChannelOption.ALLOCATOR, PooledByteBufAllocator.DEFAULT)
                    .childOption(ChannelOption.TCP_NODELAY, true)
                    .childHandler(pipeline(b, maxFrame));
            Channel listener = server.bind(new InetSocketAddress("127.0.0.1", 0)).sync().channel();
            link.listener = listener;
            new Bootstrap()
                    .group(groupA)
                    .channel(clientClass)
                    .option(ChannelOption.ALLOCATOR, PooledByteBufAllocator.DEFAULT)
                    .option(ChannelOption.TCP_NODELAY, true)
                    .handler(pipeline(a, maxFrame))
                    .connect(listener.localAddress()).sync();
            // The accepted side's handler is added on B's event loop: wait for it before anyone sends to B.
            a.awaitActive(SETUP_TIMEOUT_SECONDS, TimeUnit.SECONDS);
            b.awaitActive(SETUP_TIMEOUT_SECONDS, TimeUnit.SECONDS);
            listener.close().sync();
            return link;
        } catch (Exception | Error e) {
            link.close();
            throw e;
        }
    }

    private static ChannelInitializer<SocketChannel> pipeline(NettyEndpoint endpoint, int maxFrame) {
        return new ChannelInitializer<>() {
            @Override
            protected void initChannel(SocketChannel ch) {
                ch.pipeline().addLast(
                        new LengthFieldBasedFrameDecoder(4 + maxFrame, 0, 4, 0, 4),
                        new LengthFieldPrepender(4),
                        endpoint.handler());
            }
        };
    }

    private static final class NettyLink implements Link {
        /** Each side's event loop is named for it, so that {@code --pin} can place it with that side. */
        static final String PREFIX_A = "netty-bench-a";
        static final String PREFIX_B = "netty-bench-b";

        private final EventLoopGroup groupA;
        private final EventLoopGroup groupB;
        private final NettyEndpoint a;
        private final NettyEndpoint b;
        private volatile Channel listener;
        private boolean closed;

        NettyLink(EventLoopGroup groupA, EventLoopGroup groupB, NettyEndpoint a, NettyEndpoint b) {
            this.groupA = groupA;
            this.groupB = groupB;
            this.a = a;
            this.b = b;
        }

        @Override
        public NettyEndpoint a() {
            return a;
        }

        @Override
        public NettyEndpoint b() {
            return b;
        }

        @Override
        public String threadPrefix(boolean sideA) {
            return sideA ? PREFIX_A : PREFIX_B;
        }

        @Override
        public synchronized void close() {
            if (closed) {
                return;
            }
            closed = true;
            a.close();
            b.close();
            Channel l = listener;
            if (l != null) {
                l.close();
            }
            groupA.shutdownGracefully(0, 1, TimeUnit.SECONDS);
            groupB.shutdownGracefully(0, 1, TimeUnit.SECONDS);
            groupA.terminationFuture().awaitUninterruptibly(10, TimeUnit.SECONDS);
            groupB.terminationFuture().awaitUninterruptibly(10, TimeUnit.SECONDS);
            // Only now can no event loop add a frame: release what nobody received.
            a.releaseQueued();
            b.releaseQueued();
        }
    }
}
