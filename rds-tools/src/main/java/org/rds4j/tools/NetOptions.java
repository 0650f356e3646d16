package org.rds4j.tools;

import java.io.IOException;
import java.net.InetAddress;
import java.util.Set;
import org.rds4j.RdsSocket;
import org.rds4j.RdsSocketOptions;
import org.rds4j.RdsStack;
import org.rds4j.RdsStackConfig;

/**
 * The options every network tool shares: the stack's TCP port (both ends must agree, as with the kernel's fixed
 * 16385), the transport, and optional socket buffer sizes. Tools create their own stack rather than use the default
 * one, because only a stack of their own can have a chosen TCP port and address.
 */
final class NetOptions {
    static final Set<String> VALUE_OPTIONS = Set.of("tcp-port", "transport", "sndbuf", "rcvbuf");
    static final String USAGE = ""
            + "  --tcp-port P     TCP port of the RDS/TCP transport, the same at both ends (default "
            + RdsStackConfig.RDS_TCP_PORT + ")\n"
            + "  --transport T    tcp or loopback (default tcp)\n"
            + "  --sndbuf BYTES   SO_SNDBUF of the socket (default the stack's, 212992)\n"
            + "  --rcvbuf BYTES   SO_RCVBUF of the socket (default the stack's, 212992)\n";

    final int tcpPort;
    final String transport;
    final int sndbuf;
    final int rcvbuf;

    private NetOptions(int tcpPort, String transport, int sndbuf, int rcvbuf) {
        this.tcpPort = tcpPort;
        this.transport = transport;
        this.sndbuf = sndbuf;
        this.rcvbuf = rcvbuf;
    }

    static NetOptions from(Args args) throws UsageException {
        String transport = args.string("transport", "tcp");
        if (!transport.equals("tcp") && !transport.equals("loopback")) {
            throw new UsageException("--transport must be tcp or loopback, got '" + transport + "'");
        }
        return new NetOptions(
                args.intValue("tcp-port", RdsStackConfig.RDS_TCP_PORT, 1, 65535),
                transport,
                args.intValue("sndbuf", 0, 1, Integer.MAX_VALUE),
                args.intValue("rcvbuf", 0, 1, Integer.MAX_VALUE));
    }

    /** A new stack owning {@code address}, with this TCP port and transport; the caller closes it. */
    RdsStack createStack(String name, InetAddress address) {
        return RdsStack.create(RdsStackConfig.builder()
                .name(name)
                .address(address)
                .tcpPort(tcpPort)
                .defaultTransport(transport)
                .build());
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
