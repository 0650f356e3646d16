package org.rds4j.bench.contenders;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;

/** The raw NIO contenders' connection: two blocking channels connected over 127.0.0.1, with Nagle off. */
final class LoopbackSocketPair {
    private LoopbackSocketPair() {
    }

    /** What a contender builds on the two ends; if it throws, both channels are closed. */
    interface Ends<L> {
        L build(SocketChannel a, SocketChannel b) throws IOException;
    }

    /** Connects two channels and hands them to {@code ends}; {@code a} is the connecting end, {@code b} accepted. */
    static <L> L open(Ends<L> ends) throws IOException {
        InetAddress localhost = InetAddress.getByName("127.0.0.1");
        try (ServerSocketChannel server = ServerSocketChannel.open()) {
            server.bind(new InetSocketAddress(localhost, 0));
            SocketChannel a = SocketChannel.open(server.getLocalAddress());
            SocketChannel b = null;
            try {
                b = server.accept();
                for (SocketChannel c : new SocketChannel[] {a, b}) {
                    // Small messages must not wait for Nagle in the round trips; every contender turns it off.
                    c.setOption(StandardSocketOptions.TCP_NODELAY, true);
                }
                return ends.build(a, b);
            } catch (IOException | RuntimeException e) {
                a.close();
                if (b != null) {
                    b.close();
                }
                throw e;
            }
        }
    }
}
