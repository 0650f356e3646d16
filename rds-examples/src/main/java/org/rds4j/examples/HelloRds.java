package org.rds4j.examples;

import static java.nio.charset.StandardCharsets.UTF_8;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import org.rds4j.RdsDatagram;
import org.rds4j.RdsSocket;
import org.rds4j.RdsStack;
import org.rds4j.RdsStackConfig;

/**
 * The first message of docs/getting-started.md: two RDS hosts in one JVM, 127.0.0.1 and 127.0.0.2, and one message
 * from the first to the second over TCP.
 */
public final class HelloRds {
    private HelloRds() {
    }

    /**
     * Sends "hello, RDS" from 127.0.0.1 to 127.0.0.2 and prints what arrived.
     *
     * @param args optionally the TCP port the two hosts use (16385, the kernel's, by default)
     * @throws IOException a socket call failed
     */
    public static void main(String[] args) throws IOException {
        int tcpPort = args.length > 0 ? Integer.parseInt(args[0]) : RdsStackConfig.RDS_TCP_PORT;
        System.out.println(hello(tcpPort));
    }

    /**
     * The example itself.
     *
     * @param tcpPort the TCP port both hosts listen on and connect to
     * @return what the receiver got, as a line of text
     * @throws IOException a socket call failed, or nothing arrived within 5 s
     */
    public static String hello(int tcpPort) throws IOException {
        try (RdsStack hostA = RdsStack.create(RdsStackConfig.builder().name("a")
                     .address(InetAddress.getByName("127.0.0.1")).tcpPort(tcpPort).build());
             RdsStack hostB = RdsStack.create(RdsStackConfig.builder().name("b")
                     .address(InetAddress.getByName("127.0.0.2")).tcpPort(tcpPort).build());
             RdsSocket receiver = RdsSocket.open(hostB);
             RdsSocket sender = RdsSocket.open(hostA)) {
            receiver.bind(new InetSocketAddress("127.0.0.2", 4000));
            sender.bind(new InetSocketAddress("127.0.0.1", 0));          // port 0: any free RDS port

            sender.send(ByteBuffer.wrap("hello, RDS".getBytes(UTF_8)), receiver.localAddress());

            RdsDatagram d = receiver.receive(Duration.ofSeconds(5))
                    .orElseThrow(() -> new IOException("nothing arrived in 5 s"));
            return d.source() + " says: " + UTF_8.decode(d.payload());
        }
    }
}
