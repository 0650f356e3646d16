package org.rds4j.examples;

import java.io.IOException;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.rds4j.RdsStack;
import org.rds4j.RdsStackConfig;

/**
 * A three-node cluster in one JVM, over TCP on 127.0.0.1, 127.0.0.2 and 127.0.0.3 (each node is its own
 * {@link RdsStack}, that is, its own RDS host). Every node sends to both others and receives from both; the last
 * node starts as a slow receiver that reads nothing, so the others run into its congestion ({@code ENOBUFS}), keep
 * serving each other meanwhile, and resume when it reads again. Finally it prints what each node did and the stacks'
 * counters.
 *
 * <pre>
 * ./mvnw -q -pl rds-examples -am compile exec:java
 * </pre>
 *
 * <p>On Linux every 127.0.0.0/8 address is local; on macOS add them first
 * ({@code sudo ifconfig lo0 alias 127.0.0.2 up}, and 127.0.0.3).
 */
public final class ClusterDemo {
    /** The RDS port every node binds (on its own address). */
    public static final int RDS_PORT = 4000;

    private ClusterDemo() {
    }

    /**
     * What a run found, one entry per node.
     *
     * @param nodes each node's statistics, in start order
     * @param counters each node's stack counters after the run, in start order
     */
    public record Result(List<ClusterNode.Stats> nodes, List<Map<String, Long>> counters) {
    }

    /**
     * Runs the demonstration over TCP on 127.0.0.1 to 127.0.0.3, and fails if any message arrived out of order, twice or damaged.
     *
     * @param args none
     * @throws Exception the run failed
     */
    public static void main(String[] args) throws Exception {
        int tcpPort = freeTcpPort();
        List<RdsStack> stacks = new ArrayList<>();
        try {
            for (int i = 1; i <= 3; i++) {
                stacks.add(RdsStack.create(RdsStackConfig.builder()
                        .name("node" + i)
                        .address(InetAddress.getByName("127.0.0." + i))
                        .tcpPort(tcpPort)                 // the kernel's is 16385; a free one here
                        .defaultTransport("tcp")
                        .build()));
            }
            Result result = run(stacks, defaultSettings(), System.out);
            if (result.nodes().stream().anyMatch(s -> s.problems() != 0)) {
                throw new IllegalStateException("messages out of order, duplicated or corrupt: " + result.nodes());
            }
        } finally {
            stacks.forEach(RdsStack::close);
        }
    }

    /**
     * The settings {@link #main} uses: 500 messages of 1000 bytes to each peer, a 32000-byte send budget, the
     * default receive buffer (the slow node gets 20000), and a second at most between tries of a congested peer.
     *
     * @return the settings
     */
    public static ClusterNode.Settings defaultSettings() {
        return new ClusterNode.Settings(500, 1000, 32_000, RdsStackConfig.DEFAULT_SOCKET_BUFFER / 2,
                Duration.ofMillis(200), false);
    }

    /**
     * Runs one node on each stack, at the stack's first address and port {@link #RDS_PORT}; the last node is the
     * slow receiver. Closes the nodes, not the stacks.
     *
     * @param stacks the hosts, each with one address configured
     * @param settings what each node sends
     * @param out where to print progress and the summary
     * @return what happened
     * @throws IOException a node failed, or did not finish within a minute
     * @throws InterruptedException the calling thread was interrupted
     */
    public static Result run(List<RdsStack> stacks, ClusterNode.Settings settings, PrintStream out)
            throws IOException, InterruptedException {
        List<InetSocketAddress> addresses = new ArrayList<>();
        for (RdsStack s : stacks) {
            addresses.add(new InetSocketAddress(s.config().addresses().iterator().next(), RDS_PORT));
        }
        List<ClusterNode> nodes = new ArrayList<>();
        try {
            for (int i = 0; i < stacks.size(); i++) {
                List<InetSocketAddress> peers = new ArrayList<>(addresses);
                peers.remove(i);
                boolean slow = i == stacks.size() - 1;
                ClusterNode.Settings mine = slow ? settings.withStartPaused(true).withReceiveBuffer(20_000) : settings;
                nodes.add(new ClusterNode(stacks.get(i), addresses.get(i), peers, mine));
            }
            for (ClusterNode n : nodes) {
                n.start();
            }
            ClusterNode slow = nodes.get(nodes.size() - 1);
            out.printf("%d nodes, each sending %d messages of %d bytes to every other; %s reads nothing yet%n",
                    nodes.size(), settings.messagesPerPeer(), settings.messageSize(), slow.address());

            // Wait for the event, not for a time: some sender is refused with ENOBUFS by the slow node's port.
            List<CompletableFuture<?>> refusals = new ArrayList<>();
            for (ClusterNode n : nodes.subList(0, nodes.size() - 1)) {
                refusals.add(n.firstRefusal());
            }
            try {
                CompletableFuture.anyOf(refusals.toArray(new CompletableFuture<?>[0])).get(30, TimeUnit.SECONDS);
                out.printf("%s is congested: a sender got ENOBUFS and serves the other peers meanwhile%n",
                        slow.address());
            } catch (TimeoutException e) {
                out.println("no sender was refused within 30 s (the slow node's buffer was never full)");
            } catch (ExecutionException e) {
                throw new IOException(e.getCause());
            }
            slow.resumeReading();
            out.printf("%s reads again%n", slow.address());

            for (ClusterNode n : nodes) {
                if (!n.awaitDone(Duration.ofSeconds(60))) {
                    throw new IOException("node " + n.address() + " did not finish in 60 s: " + n.stats());
                }
            }
            List<ClusterNode.Stats> stats = new ArrayList<>();
            List<Map<String, Long>> counters = new ArrayList<>();
            for (ClusterNode n : nodes) {
                ClusterNode.Stats s = n.stats();
                Map<String, Long> c = n.stack().counters();
                stats.add(s);
                counters.add(c);
                out.printf("%s: sent %d, received %d, problems %d; refused: eagain %d, enobufs %d; "
                                + "congestion updates %d%n", n.address(), s.sent(), s.received(), s.problems(),
                        s.eagain(), s.enobufs(), s.congestionUpdates());
                out.printf("    stack %s: %s%n", n.stack().config().name(), pick(c, "send_queued",
                        "recv_delivered", "send_queue_full", "cong_send_error", "cong_update_queued",
                        "cong_update_received", "conn_reset"));
            }
            return new Result(stats, counters);
        } finally {
            for (ClusterNode n : nodes) {
                n.close();
            }
        }
    }

    private static String pick(Map<String, Long> counters, String... names) {
        StringBuilder b = new StringBuilder();
        for (String name : names) {
            b.append(b.length() == 0 ? "" : " ").append(name).append('=').append(counters.get(name));
        }
        return b.toString();
    }

    /**
     * A TCP port that is free on 127.0.0.1 right now, for the stacks to listen on.
     *
     * @return the port
     * @throws IOException no port could be found
     */
    public static int freeTcpPort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
            return s.getLocalPort();
        }
    }
}
