package org.rds4j.bench.contenders;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;
import org.rds4j.RdsSocket;
import org.rds4j.RdsSocketOptions;
import org.rds4j.RdsStack;
import org.rds4j.RdsStackConfig;
import org.rds4j.bench.Contender;
import org.rds4j.bench.Endpoint;
import org.rds4j.bench.Link;

/**
 * rds4j through its public API only: two stacks in this JVM, "hosts" 127.0.0.1 and 127.0.0.2, one socket each, over
 * the given transport ({@code tcp}: a real TCP connection between the stacks, framed as the kernel's RDS/TCP;
 * {@code loopback}: the protocol between stacks of one JVM without sockets).
 *
 * <p>Each stack gets a TCP port of its own choosing rather than 16385, so that the benchmark can run beside a kernel
 * RDS, an rds4j tool or another benchmark on the same machine. Socket buffers are at least four messages, so that a
 * 1 MiB message fits the send budget and the receiver's budget holds a few in flight.
 */
public final class Rds4jContender implements Contender {
    /** Every blocking call returns within this, so a lost message fails the call rather than hanging the cell. */
    private static final Duration CALL_TIMEOUT = Duration.ofSeconds(30);
    private static final int PORT_ATTEMPTS = 5;

    private final String transport;
    private final String name;
    private final UnaryOperator<RdsStackConfig.Builder> tuning;

    /** rds4j with the default stack settings over {@code transport}, named {@code rds4j-TRANSPORT}. */
    public Rds4jContender(String transport) {
        this(transport, "rds4j-" + transport, UnaryOperator.identity());
    }

    /**
     * A variant: {@code tuning} adjusts both stacks' configuration, for instance a future busy-polling switch
     * ({@code new Rds4jContender("tcp", "rds4j-tcp-busypoll", b -> b.busyPoll(true))}) or TLS properties.
     */
    public Rds4jContender(String transport, String name, UnaryOperator<RdsStackConfig.Builder> tuning) {
        this.transport = transport;
        this.name = name;
        this.tuning = tuning;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public String description() {
        return "rds4j, two stacks (127.0.0.1, 127.0.0.2), transport \"" + transport + "\", blocking sockets, one "
                + "reused send buffer, receive(ByteBuffer, RdsMessageInfo, flags) into one reused buffer";
    }

    @Override
    public Link open(int maxMessageSize) throws IOException {
        InetAddress hostA = InetAddress.getByName("127.0.0.1");
        InetAddress hostB = InetAddress.getByName("127.0.0.2");
        int buffer = Math.max(RdsStackConfig.DEFAULT_SOCKET_BUFFER, 4 * maxMessageSize);
        IOException last = null;
        // The free port is found by asking the kernel, then released: another process may take it in between.
        for (int attempt = 0; attempt < PORT_ATTEMPTS; attempt++) {
            int tcpPort = transport.equals("tcp") ? freeTcpPort(hostA, hostB) : RdsStackConfig.RDS_TCP_PORT;
            List<AutoCloseable> opened = new ArrayList<>();
            try {
                RdsStack a = stack("bench-a", hostA, tcpPort, buffer, opened);
                RdsStack b = stack("bench-b", hostB, tcpPort, buffer, opened);
                RdsSocket sa = socket(a, hostA, buffer, opened);
                RdsSocket sb = socket(b, hostB, buffer, opened);
                return new Rds4jLink(new Rds4jEndpoint(sa, sb.localAddress()),
                        new Rds4jEndpoint(sb, sa.localAddress()), opened);
            } catch (IOException e) {
                closeAll(opened);
                last = e;
            } catch (RuntimeException e) {
                closeAll(opened);
                throw e;
            }
        }
        throw last;
    }

    private RdsStack stack(String stackName, InetAddress address, int tcpPort, int buffer, List<AutoCloseable> opened) {
        RdsStack s = RdsStack.create(tuning.apply(RdsStackConfig.builder()
                .name(stackName)
                .address(address)
                .tcpPort(tcpPort)
                .defaultTransport(transport))
                .build());
        opened.add(s);
        return s;
    }

    private RdsSocket socket(RdsStack stack, InetAddress address, int buffer, List<AutoCloseable> opened)
            throws IOException {
        RdsSocket s = stack.openSocket();
        opened.add(s);
        s.setOption(RdsSocketOptions.SO_RDS_TRANSPORT, transport);
        s.setOption(RdsSocketOptions.SO_SNDBUF, buffer);
        s.setOption(RdsSocketOptions.SO_RCVBUF, buffer);
        s.setOption(RdsSocketOptions.SO_SNDTIMEO, CALL_TIMEOUT);
        s.setOption(RdsSocketOptions.SO_RCVTIMEO, CALL_TIMEOUT);
        s.bind(new InetSocketAddress(address, 0));
        return s;
    }

    /** A TCP port free on both addresses a moment ago. */
    private static int freeTcpPort(InetAddress a, InetAddress b) throws IOException {
        for (int i = 0; i < 20; i++) {
            int port;
            try (ServerSocket probe = new ServerSocket(0, 1, a)) {
                port = probe.getLocalPort();
            }
            try {
                new ServerSocket(port, 1, b).close();
                return port;
            } catch (IOException taken) {
                // Try another.
            }
        }
        throw new IOException("no TCP port free on both " + a + " and " + b);
    }

    private static void closeAll(List<AutoCloseable> opened) {
        // Sockets before their stacks: the reverse of opening.
        for (int i = opened.size() - 1; i >= 0; i--) {
            try {
                opened.get(i).close();
            } catch (Exception ignored) {
                // Closing is all that is left to do.
            }
        }
    }

    private static final class Rds4jLink implements Link {
        private final Endpoint a;
        private final Endpoint b;
        private final List<AutoCloseable> opened;

        Rds4jLink(Endpoint a, Endpoint b, List<AutoCloseable> opened) {
            this.a = a;
            this.b = b;
            this.opened = opened;
        }

        @Override
        public Endpoint a() {
            return a;
        }

        @Override
        public Endpoint b() {
            return b;
        }

        @Override
        public void close() {
            // Closing a socket wakes its blocked calls with EBADF; closing a stack is idempotent.
            closeAll(opened);
        }
    }
}
