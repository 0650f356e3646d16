package org.rds4j.bench.contenders;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;
import org.rds4j.EaddrinuseException;
import org.rds4j.RdsSocket;
import org.rds4j.RdsSocketOptions;
import org.rds4j.RdsStack;
import org.rds4j.RdsStackConfig;
import org.rds4j.RdsTlsConfig;
import org.rds4j.bench.Contender;
import org.rds4j.bench.Endpoint;
import org.rds4j.bench.Link;

/**
 * rds4j through its public API only: two stacks in this JVM, "hosts" 127.0.0.1 and 127.0.0.2, one socket each, over
 * the given transport ({@code tcp}: a real TCP connection between the stacks, framed as the kernel's RDS/TCP;
 * {@code loopback}: the protocol between stacks of one JVM without sockets).
 *
 * <p>A variant holds several socket pairs between the two stacks ({@link #multipath}): the harness drives each pair
 * with its own threads, each socket is bound to a port that hashes to a lane of its own, and the link checks at the
 * end of the cell that the messages went over those lanes.
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
    /** Socket pairs; above 1, each socket is bound to a port on a lane of its own. */
    private final int pairs;
    /** The paths each stack offers, as {@code tuning} sets them (checked at the end of a multi-pair cell). */
    private final int paths;
    private final String detail;
    /** Whether the stacks talk over TLS ({@link #tls}): both get the benchmark's key and a second free port. */
    private boolean tls;
    /** SO_SNDBUF and SO_RCVBUF of every socket ({@link #socketBuffers}), or 0: the stack's default. */
    private int socketBuffer;

    /** rds4j with the default stack settings over {@code transport}, named {@code rds4j-TRANSPORT}. */
    public Rds4jContender(String transport) {
        this(transport, "rds4j-" + transport, UnaryOperator.identity());
    }

    /**
     * A variant: {@code tuning} adjusts both stacks' configuration, for instance a future busy-polling switch
     * ({@code new Rds4jContender("tcp", "rds4j-tcp-busypoll", b -> b.busyPoll(true))}) or TLS properties.
     */
    public Rds4jContender(String transport, String name, UnaryOperator<RdsStackConfig.Builder> tuning) {
        this(transport, name, tuning, "");
    }

    /** A variant whose description adds {@code detail} (", " and what {@code tuning} changes) after the transport. */
    public Rds4jContender(String transport, String name, UnaryOperator<RdsStackConfig.Builder> tuning,
            String detail) {
        this(transport, name, tuning, 1, RdsStackConfig.builder().build().paths(), detail);
    }

    /**
     * {@code paths} is what the end-of-cell check takes the stacks' offer to be; it must match what {@code tuning}
     * sets (a test gives a different one to see the check fail).
     */
    Rds4jContender(String transport, String name, UnaryOperator<RdsStackConfig.Builder> tuning, int pairs,
            int paths, String detail) {
        this.transport = transport;
        this.name = name;
        this.tuning = tuning;
        this.pairs = pairs;
        this.paths = paths;
        this.detail = detail;
    }

    /**
     * {@code pairs} socket pairs over TCP between the two stacks, each stack offering {@code paths} paths and running
     * {@code ioThreads} TCP I/O threads ({@code tcp.ioThreads}). The sockets' ports hash to different lanes (as many
     * as there are paths), so with 8 paths and 8 pairs every pair has a TCP connection of its own, and with 1 path all
     * share one.
     */
    public static Rds4jContender multipath(String name, int pairs, int paths, int ioThreads, String why) {
        return new Rds4jContender("tcp", name, b -> b.paths(paths).property("tcp.ioThreads",
                Integer.toString(ioThreads)), pairs, paths, ", " + pairs + " socket pairs (each driven by a sender and "
                + "a receiver thread of its own, ports hashing to " + Math.min(pairs, 8) + " different lanes), paths("
                + paths + "), tcp.ioThreads " + ioThreads + why);
    }

    /**
     * The default stacks over {@code transport}, every socket with SO_SNDBUF and SO_RCVBUF of {@code bytes} (at least
     * four messages still). The send budget is half of SO_SNDBUF and is given back only when the peer acknowledges,
     * so at 8 KiB and above it, not the path's code, can bound a single socket's throughput (docs/performance.md).
     */
    public static Rds4jContender socketBuffers(String name, String transport, int bytes, String why) {
        Rds4jContender c = new Rds4jContender(transport, name, UnaryOperator.identity(), 1,
                RdsStackConfig.builder().build().paths(), ", SO_SNDBUF and SO_RCVBUF " + bytes + " bytes" + why);
        c.socketBuffer = bytes;
        return c;
    }

    /**
     * The default stacks over TCP inside TLS (docs/security.md): mutual authentication with one self-signed key (see
     * BenchTls), TLS 1.3 with the JDK's provider, on a port of its own.
     */
    public static Rds4jContender tls(String name) {
        Rds4jContender c = new Rds4jContender("tcp", name, UnaryOperator.identity(), 1,
                RdsStackConfig.builder().build().paths(), ", inside TLS 1.3 (the JDK's SSLEngine through Netty's"
                + " SslHandler; mutual authentication, EC P-256 key)");
        c.tls = true;
        return c;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public String description() {
        return "rds4j, two stacks (127.0.0.1, 127.0.0.2), transport \"" + transport + "\"" + detail + ", blocking "
                + "sockets, one reused send buffer, receive(ByteBuffer, RdsMessageInfo, flags) into one reused buffer"
                + (pairs > 1 ? " per socket" : "; both sockets bound to one RDS port on lane 0");
    }

    @Override
    public Link open(int maxMessageSize) throws IOException {
        InetAddress hostA = InetAddress.getByName("127.0.0.1");
        InetAddress hostB = InetAddress.getByName("127.0.0.2");
        int buffer = Math.max(socketBuffer > 0 ? socketBuffer : RdsStackConfig.DEFAULT_SOCKET_BUFFER, 4 * maxMessageSize);
        IOException last = null;
        // The free port is found by asking the kernel, then released: another process may take it in between.
        for (int attempt = 0; attempt < PORT_ATTEMPTS; attempt++) {
            int tcpPort = transport.equals("tcp") ? freeTcpPort(hostA, hostB) : RdsStackConfig.RDS_TCP_PORT;
            RdsTlsConfig tlsConfig = null;
            if (tls) {
                int tlsPort;
                do {
                    tlsPort = freeTcpPort(hostA, hostB);
                } while (tlsPort == tcpPort);
                tlsConfig = RdsTlsConfig.builder(BenchTls.context()).port(tlsPort).build();
            }
            List<AutoCloseable> opened = new ArrayList<>();
            try {
                RdsStack a = stack("bench-a", hostA, tcpPort, tlsConfig, opened);
                RdsStack b = stack("bench-b", hostB, tcpPort, tlsConfig, opened);
                RdsSocket[] sa = new RdsSocket[pairs];
                RdsSocket[] sb = new RdsSocket[pairs];
                for (int p = 0; p < pairs; p++) {
                    sa[p] = socket(a, hostA, buffer, p, opened);
                    sb[p] = socket(b, hostB, buffer, p, opened);
                }
                Rds4jEndpoint[] ea = new Rds4jEndpoint[pairs];
                Rds4jEndpoint[] eb = new Rds4jEndpoint[pairs];
                for (int p = 0; p < pairs; p++) {
                    ea[p] = new Rds4jEndpoint(sa[p], sb[p].localAddress());
                    eb[p] = new Rds4jEndpoint(sb[p], sa[p].localAddress());
                }
                return new Rds4jLink(a, b, ea, eb, opened);
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

    private RdsStack stack(String stackName, InetAddress address, int tcpPort, RdsTlsConfig tlsConfig,
                           List<AutoCloseable> opened) {
        RdsStack s = RdsStack.create(tuning.apply(RdsStackConfig.builder()
                .name(stackName)
                .address(address)
                .tcpPort(tcpPort)
                .tls(tlsConfig)
                .defaultTransport(transport))
                .build());
        opened.add(s);
        return s;
    }

    /**
     * Socket {@code pair} of a stack: bound to the first free port on lane {@code pair} (of 8), the same port number
     * on both stacks, as rds-stress binds task i's port on both hosts. A pair's messages and the replies or
     * acknowledgements coming back then share one path whatever the run, where free ports drew a new pair of lanes
     * each time (decision 0042).
     */
    private RdsSocket socket(RdsStack stack, InetAddress address, int buffer, int pair, List<AutoCloseable> opened)
            throws IOException {
        RdsSocket s = stack.openSocket();
        opened.add(s);
        s.setOption(RdsSocketOptions.SO_RDS_TRANSPORT, transport);
        s.setOption(RdsSocketOptions.SO_SNDBUF, buffer);
        s.setOption(RdsSocketOptions.SO_RCVBUF, buffer);
        s.setOption(RdsSocketOptions.SO_SNDTIMEO, CALL_TIMEOUT);
        s.setOption(RdsSocketOptions.SO_RCVTIMEO, CALL_TIMEOUT);
        // Lanes of 8 whatever this contender's paths: the 1-path and 8-path cells then use the very same ports.
        EaddrinuseException taken = null;
        for (int port : Lanes.candidates(pair % 8, 8, Lanes.FIRST_PORT)) {
            try {
                s.bind(new InetSocketAddress(address, port));
                return s;
            } catch (EaddrinuseException e) {
                taken = e;                           // one of the stack's own ports (acknowledgement pings): next
            }
        }
        throw new IOException("no free RDS port on lane " + pair % 8 + " of " + address, taken);
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

    private final class Rds4jLink implements Link {
        private final RdsStack stackA;
        private final RdsStack stackB;
        private final Rds4jEndpoint[] a;
        private final Rds4jEndpoint[] b;
        private final List<AutoCloseable> opened;

        Rds4jLink(RdsStack stackA, RdsStack stackB, Rds4jEndpoint[] a, Rds4jEndpoint[] b, List<AutoCloseable> opened) {
            this.stackA = stackA;
            this.stackB = stackB;
            this.a = a;
            this.b = b;
            this.opened = opened;
        }

        @Override
        public Endpoint a() {
            return a[0];
        }

        @Override
        public Endpoint b() {
            return b[0];
        }

        @Override
        public int pairs() {
            return a.length;
        }

        @Override
        public String threadPrefix(boolean sideA) {
            // I/O and timer threads, and a loop of the stack's own; the loopback thread stacks share has no side
            return "rds4j-" + (sideA ? stackA : stackB).config().name() + "-";
        }

        @Override
        public Map<String, Long> counters(boolean sideA) {
            return (sideA ? stackA : stackB).counters();
        }

        @Override
        public Endpoint a(int pair) {
            return a[pair];
        }

        @Override
        public Endpoint b(int pair) {
            return b[pair];
        }

        /** With several pairs: each direction's messages went over the lanes the sockets' ports hash to. */
        @Override
        public void verify() throws IOException {
            if (a.length > 1) {
                InetAddress hostA = b[0].peer().getAddress();
                InetAddress hostB = a[0].peer().getAddress();
                Lanes.verify(stackA, hostB, transport, paths, ports(a), sent(a));
                Lanes.verify(stackB, hostA, transport, paths, ports(b), sent(b));
            }
        }

        private static int[] ports(Rds4jEndpoint[] endpoints) {
            int[] out = new int[endpoints.length];
            for (int i = 0; i < out.length; i++) {
                out[i] = endpoints[i].localPort();
            }
            return out;
        }

        private static long[] sent(Rds4jEndpoint[] endpoints) {
            long[] out = new long[endpoints.length];
            for (int i = 0; i < out.length; i++) {
                out[i] = endpoints[i].sent();
            }
            return out;
        }

        @Override
        public void close() {
            // Closing a socket wakes its blocked calls with EBADF; closing a stack is idempotent.
            closeAll(opened);
        }
    }
}
