package org.rds4j.tools;

import java.io.IOException;
import java.net.InetAddress;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import org.rds4j.RdsSocket;
import org.rds4j.RdsSocketOptions;
import org.rds4j.RdsStack;
import org.rds4j.RdsStackConfig;

/**
 * The options every network tool shares: the stack's TCP port (both ends must agree, as with the kernel's fixed
 * 16385), the transport, the paths offered to each peer, and optional socket buffer sizes. Tools create their own
 * stack rather than use the default one, because only a stack of their own can have a chosen TCP port and address.
 */
final class NetOptions {
    static final Set<String> VALUE_OPTIONS =
            Set.of("tcp-port", "transport", "paths", "sndbuf", "rcvbuf", "property");
    static final String USAGE = ""
            + "  --tcp-port P     TCP port of the RDS/TCP transport, the same at both ends (default "
            + RdsStackConfig.RDS_TCP_PORT + ")\n"
            + "  --transport T    tcp or loopback (default tcp)\n"
            + "  --paths N        paths (lanes) offered to each peer: 1, 2, 4 or 8 (default 8, as the kernel)\n"
            + "  --sndbuf BYTES   SO_SNDBUF of the socket (default the stack's, 212992)\n"
            + "  --rcvbuf BYTES   SO_RCVBUF of the socket (default the stack's, 212992)\n"
            + "  --property K=V[,K=V...]\n"
            + "                   settings of the tool's stack (RdsStackConfig.property), such as\n"
            + "                   tcp.ioThreads=2 or tcp.yieldMicros=0; docs/tools.md lists them\n";

    /** The most paths a stack offers, and its default: the kernel's {@code RDS_MPATH_WORKERS}. */
    private static final int MAX_PATHS = 8;

    final int tcpPort;
    final String transport;
    /** {@code --paths}: the paths the stack offers each peer ({@link RdsStackConfig#paths()}). */
    final int paths;
    final int sndbuf;
    final int rcvbuf;
    /** {@code --property}: the stack's transport properties, in the order given. */
    final Map<String, String> properties;

    private NetOptions(int tcpPort, String transport, int paths, int sndbuf, int rcvbuf,
                       Map<String, String> properties) {
        this.tcpPort = tcpPort;
        this.transport = transport;
        this.paths = paths;
        this.sndbuf = sndbuf;
        this.rcvbuf = rcvbuf;
        this.properties = properties;
    }

    static NetOptions from(Args args) throws UsageException {
        String transport = args.string("transport", "tcp");
        if (!transport.equals("tcp") && !transport.equals("loopback")) {
            throw new UsageException("--transport must be tcp or loopback, got '" + transport + "'");
        }
        int paths = args.intValue("paths", MAX_PATHS, 1, MAX_PATHS);
        if (Integer.bitCount(paths) != 1) {
            throw new UsageException("--paths must be 1, 2, 4 or 8 (the kernel hashes sockets onto paths with a"
                    + " mask), got " + paths);
        }
        return new NetOptions(
                args.intValue("tcp-port", RdsStackConfig.RDS_TCP_PORT, 1, 65535),
                transport,
                paths,
                args.intValue("sndbuf", 0, 1, Integer.MAX_VALUE),
                args.intValue("rcvbuf", 0, 1, Integer.MAX_VALUE),
                properties(args.string("property", "")));
    }

    private static Map<String, String> properties(String spec) throws UsageException {
        Map<String, String> out = new LinkedHashMap<>();
        for (String pair : spec.split(",")) {
            if (pair.isBlank()) {
                continue;
            }
            int eq = pair.indexOf('=');
            if (eq <= 0) {
                throw new UsageException("--property takes KEY=VALUE pairs separated by commas, got '" + pair + "'");
            }
            out.put(pair.substring(0, eq).trim(), pair.substring(eq + 1).trim());
        }
        return out;
    }

    /** A new stack owning {@code address}, with this TCP port and transport; the caller closes it. */
    RdsStack createStack(String name, InetAddress address) {
        RdsStackConfig.Builder b = RdsStackConfig.builder()
                .name(name)
                .address(address)
                .tcpPort(tcpPort)
                .paths(paths)
                .defaultTransport(transport);
        properties.forEach(b::property);
        return RdsStack.create(b.build());
    }

    /** Opens an unbound socket on {@code stack} with this transport and the buffer sizes given, if any. */
    RdsSocket openSocket(RdsStack stack) throws IOException {
        RdsSocket s = stack.openSocket();
        try {
            s.setOption(RdsSocketOptions.SO_RDS_TRANSPORT, transport);
            if (sndbuf > 0) {
                s.setOption(RdsSocketOptions.SO_SNDBUF, sndbuf);
            }
            if (rcvbuf > 0) {
                s.setOption(RdsSocketOptions.SO_RCVBUF, rcvbuf);
            }
            return s;
        } catch (IOException | RuntimeException e) {
            s.close();
            throw e;
        }
    }
}
