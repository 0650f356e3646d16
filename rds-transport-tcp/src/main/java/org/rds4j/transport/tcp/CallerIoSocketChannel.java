package org.rds4j.transport.tcp;

import io.netty.channel.Channel;
import io.netty.channel.socket.nio.NioSocketChannel;
import java.nio.channels.SocketChannel;

/**
 * Netty's NIO channel, with the JDK channel under it open to the connection's application threads under caller I/O
 * (busy-poll, decision 0031): they read and write it outside the event loop while they hold the core's connection.
 * A JDK channel's close waits for a read or write in progress, which then fails, so the event loop closing the
 * channel never lets a caller use a descriptor number that another socket got meanwhile.
 */
final class CallerIoSocketChannel extends NioSocketChannel {
    CallerIoSocketChannel() {
    }

    CallerIoSocketChannel(Channel parent, SocketChannel ch) {
        super(parent, ch);
    }

    /** The JDK channel: non-blocking, read and written by one thread at a time (see TcpConnection's caller I/O). */
    SocketChannel jdkChannel() {
        return javaChannel();
    }
}
