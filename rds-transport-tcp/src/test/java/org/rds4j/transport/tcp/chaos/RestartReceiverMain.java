package org.rds4j.transport.tcp.chaos;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Optional;
import org.rds4j.RdsDatagram;
import org.rds4j.RdsSocket;
import org.rds4j.RdsSocketOptions;
import org.rds4j.RdsStack;
import org.rds4j.RdsStackConfig;

/**
 * The receiving host of {@link PeerRestartTest}, in its own JVM so that the test can kill it like a crashed machine.
 * Binds {@code address:rdsPort}, prints {@code READY}, then for every message it receives checks its bytes against
 * {@link Chaos#fillBody} and prints {@code R <k>} at once (flushed: a line the test read is a message this process
 * had in hand). It prints {@code BAD ...} for a message whose bytes are wrong, {@code SRC ...} for one from an
 * unexpected source, {@code PROGRESS ...} every 10,000 messages, {@code IDLE ...} with its counters when nothing came
 * for a second (its side of a stall), and exits when its standard input closes, so that it
 * never outlives the test.
 *
 * <p>Arguments: address tcpPort rdsPort seed minSize maxSize total expectedSourceAddress expectedSourcePort.
 */
public final class RestartReceiverMain {
    private RestartReceiverMain() {
    }

    public static void main(String[] args) throws Exception {
        InetAddress address = InetAddress.getByName(args[0]);
        int tcpPort = Integer.parseInt(args[1]);
        int rdsPort = Integer.parseInt(args[2]);
        long seed = Long.parseLong(args[3]);
        int minSize = Integer.parseInt(args[4]);
        int maxSize = Integer.parseInt(args[5]);
        long total = Long.parseLong(args[6]);
        InetSocketAddress expectedSource = new InetSocketAddress(InetAddress.getByName(args[7]),
                Integer.parseInt(args[8]));
        StreamChecker checker = new StreamChecker(seed, 0, minSize, maxSize, total);
        try (RdsStack stack = RdsStack.create(RdsStackConfig.builder().name("restart-peer").address(address)
                .tcpPort(tcpPort).defaultTransport("tcp").build());
             RdsSocket s = stack.openSocket()) {
            s.bind(new InetSocketAddress(address, rdsPort));
            Thread watchdog = new Thread(() -> {
                try {
                    while (System.in.read() >= 0) {
                        // drain until the parent closes our stdin or dies
                    }
                } catch (Exception ignored) {
                    // the parent is gone either way
                }
                System.exit(0);
            }, "stdin-watchdog");
            watchdog.setDaemon(true);
            watchdog.start();
            System.out.println("READY " + s.localAddress() + " SO_RCVBUF=" + s.getOption(RdsSocketOptions.SO_RCVBUF));
            long n = 0;
            long idleReportedAt = -1;
            while (true) {
                Optional<RdsDatagram> d = s.receive(Duration.ofSeconds(1));
                if (d.isEmpty()) {
                    if (idleReportedAt != n) {      // once per idle spell: this host's side of a stall
                        idleReportedAt = n;
                        System.out.println("IDLE after " + n + " messages for 1 s; counters " + stack.counters());
                    }
                    continue;
                }
                n++;
                if (!expectedSource.equals(d.get().source())) {
                    System.out.println("SRC message #" + n + " came from " + d.get().source());
                    continue;
                }
                long k = checker.accept(d.get().payload());
                // System.out flushes on every println: the parent sees each message as soon as we have it.
                System.out.println(k >= 0 ? "R " + k : "BAD " + checker.firstAnomaly());
                if (n % 10_000 == 0) {
                    System.out.println("PROGRESS " + n + " messages; " + checker + "; " + Chaos.counters(
                            stack.counters()));
                }
            }
        }
    }
}
