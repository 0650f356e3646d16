package org.rds4j.transport.tcp;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.rds4j.RdsStackConfig;

/** Two "hosts" in one JVM: "srv" listens on 127.0.0.2, "cli" connects from 127.0.0.1; each its own TCP transport. */
final class Stacks implements AutoCloseable {
    static final Duration WAIT = Duration.ofSeconds(20);
    static final InetAddress CLIENT = TestHost.addr("127.0.0.1");
    static final InetAddress SERVER = TestHost.addr("127.0.0.2");

    final int port;
    final TestHost srvHost;
    final TestHost cliHost;
    final TcpTransportInstance srv;
    final TcpTransportInstance cli;
    final BlockingQueue<RecordingHandler> accepted = new LinkedBlockingQueue<>();

    Stacks(Map<String, String> properties) throws IOException {
        port = freePort();
        RdsStackConfig.Builder s = TestHost.config("srv", port);
        RdsStackConfig.Builder c = TestHost.config("cli", port);
        properties.forEach((k, v) -> {
            s.property(k, v);
            c.property(k, v);
        });
        srvHost = new TestHost(s.build());
        cliHost = new TestHost(c.build());
        srv = (TcpTransportInstance) new TcpTransport().open(srvHost);
        cli = (TcpTransportInstance) new TcpTransport().open(cliHost);
        srvHost.acceptor = conn -> {
            RecordingHandler h = new RecordingHandler("srv");
            h.connection = conn;
            accepted.add(h);
            return h;
        };
        srv.listen(SERVER);
    }

    Stacks() throws IOException {
        this(Map.of());
    }

    static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, SERVER)) {
            return s.getLocalPort();
        }
    }

    /** A connected pair of handlers: [client, server]. */
    RecordingHandler[] connect() throws Exception {
        RecordingHandler client = new RecordingHandler("cli");
        cli.connect(CLIENT, SERVER, -1, client);
        client.connected.get(WAIT.toSeconds(), TimeUnit.SECONDS);
        RecordingHandler server = accepted.poll(WAIT.toSeconds(), TimeUnit.SECONDS);
        if (server == null) {
            throw new AssertionError("no connection accepted");
        }
        return new RecordingHandler[] {client, server};
    }

    @Override
    public void close() {
        cli.close();
        srv.close();
        cliHost.close();
        srvHost.close();
    }
}
