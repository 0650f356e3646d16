package org.rds4j.transport.tcp;

import io.netty.channel.socket.nio.NioServerSocketChannel;
import java.io.IOException;
import java.nio.channels.SocketChannel;
import java.util.List;

/** Netty's NIO listening channel, accepting into {@link CallerIoSocketChannel}s under caller I/O. */
final class CallerIoServerSocketChannel extends NioServerSocketChannel {
    @Override
    protected int doReadMessages(List<Object> buf) throws Exception {
        SocketChannel ch = javaChannel().accept();
        if (ch == null) {
            return 0;
        }
        try {
            buf.add(new CallerIoSocketChannel(this, ch));
            return 1;
        } catch (RuntimeException e) {
            try {
                ch.close();
            } catch (IOException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
    }
}
