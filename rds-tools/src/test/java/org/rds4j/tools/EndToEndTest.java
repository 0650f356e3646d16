package org.rds4j.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The tools against the real implementation, each in its own JVM as a user would run them, on 127.0.0.1 and
 * 127.0.0.2 with a free TCP port. Generous bounds: two cores build, test and run several JVMs at once.
 */
@Timeout(300)
class EndToEndTest {
    private static final Duration STARTUP = Duration.ofSeconds(60);
    private static final Duration RUN = Duration.ofSeconds(180);

    private final List<ToolProcess> processes = new ArrayList<>();

    private ToolProcess start(String... args) throws Exception {
        ToolProcess p = ToolProcess.start(args);
        processes.add(p);
        return p;
    }

    @AfterEach
    void killEverything() throws InterruptedException {
        for (ToolProcess p : processes) {
            p.close();
        }
    }

    @Test
    void sendAndRecvInTwoProcessesVerifyAHundredThousandMessages() throws Exception {
        String tcpPort = Integer.toString(ToolProcess.freeTcpPort());
        ToolProcess recv = start("recv", "--bind", "127.0.0.2:4000", "--count", "100000", "--timeout", "150",
                "--tcp-port", tcpPort);
        recv.awaitLine(l -> l.startsWith("recv: listening on 127.0.0.2:4000"), STARTUP);
        ToolProcess send = start("send", "--bind", "127.0.0.1:4001", "--to", "127.0.0.2:4000", "--count", "100000",
                "--size", "100", "--timeout", "150", "--tcp-port", tcpPort);

        assertEquals(0, send.awaitExit(RUN), send.describe());
        assertEquals(0, recv.awaitExit(RUN), recv.describe());
        assertTrue(send.stdout().stream().anyMatch(l -> l.startsWith("send: OK: 100000 messages")), send.describe());
        assertTrue(recv.stdout().stream().anyMatch(l -> l.startsWith("recv: OK: 100000 messages")
                && l.contains("from 1 sources") && l.contains("0 lost, 0 duplicate, 0 reordered, 0 corrupt")),
                recv.describe());
    }

    /**
     * A receiver that reads nothing for 2 s with a 20000-byte SO_RCVBUF (its port is congested once more than 20000
     * bytes are unread) and a non-blocking sender of 5 MB: the sender meets a full send buffer or the congested port
     * (which of the two, and how often, depends on when its JVM gets going), backs off, and every message arrives.
     */
    @Test
    void nonBlockingSendToAStalledReceiverBacksOffAndEverythingArrives() throws Exception {
        String tcpPort = Integer.toString(ToolProcess.freeTcpPort());
        ToolProcess recv = start("recv", "--bind", "127.0.0.2:4000", "--count", "5000", "--stall", "2",
                "--rcvbuf", "20000", "--timeout", "150", "--tcp-port", tcpPort);
        recv.awaitLine(l -> l.startsWith("recv: listening on 127.0.0.2:4000"), STARTUP);
        ToolProcess send = start("send", "--bind", "127.0.0.1:4001", "--to", "127.0.0.2:4000", "--count", "5000",
                "--size", "1000", "--nonblocking", "--timeout", "150", "--tcp-port", tcpPort);

        assertEquals(0, send.awaitExit(RUN), send.describe());
        assertEquals(0, recv.awaitExit(RUN), recv.describe());
        Matcher m = Pattern.compile("^send: OK: 5000 messages of 1000 bytes .*; nonblocking: eagain=(\\d+) "
                + "enobufs=(\\d+) cong_updates=(\\d+) waits_timed_out=(\\d+)$").matcher(summary(send, "send: "));
        assertTrue(m.matches(), send.describe());
        long eagain = Long.parseLong(m.group(1));
        long enobufs = Long.parseLong(m.group(2));
        assertTrue(enobufs > 0 || eagain > 0, "the sender never had to back off\n" + send.describe());
        assertRecvVerifiedAll(recv, 5000);
    }

    @Test
    void blockingSendToAStalledReceiverWaitsAndEverythingArrives() throws Exception {
        String tcpPort = Integer.toString(ToolProcess.freeTcpPort());
        ToolProcess recv = start("recv", "--bind", "127.0.0.2:4000", "--count", "5000", "--stall", "2",
                "--rcvbuf", "20000", "--timeout", "150", "--tcp-port", tcpPort);
        recv.awaitLine(l -> l.startsWith("recv: listening on 127.0.0.2:4000"), STARTUP);
        ToolProcess send = start("send", "--bind", "127.0.0.1:4001", "--to", "127.0.0.2:4000", "--count", "5000",
                "--size", "1000", "--sndbuf", "50000", "--timeout", "150", "--tcp-port", tcpPort);

        assertEquals(0, send.awaitExit(RUN), send.describe());
        assertEquals(0, recv.awaitExit(RUN), recv.describe());
        assertTrue(Pattern.matches("^send: OK: 5000 messages of 1000 bytes .*; "
                + "blocking: cong_send_blocked=\\d+ send_queue_full=\\d+$", summary(send, "send: ")), send.describe());
        assertRecvVerifiedAll(recv, 5000);
    }

    private static String summary(ToolProcess p, String prefix) {
        return p.stdout().stream().filter(l -> l.startsWith(prefix) && !l.contains("listening")).findFirst()
                .orElse("");
    }

    private static void assertRecvVerifiedAll(ToolProcess recv, int count) {
        String line = summary(recv, "recv: ");
        assertTrue(line.startsWith("recv: OK: " + count + " messages (" + count * 1000L + " bytes) from 1 sources")
                && line.contains("0 lost, 0 duplicate, 0 reordered, 0 corrupt")
                && Pattern.compile("; stalled 2\\.\\d\\d s first, cong_update_queued=\\d+$").matcher(line).find(),
                recv.describe());
    }

    /**
     * rds-ping's options and lines: no source address given, so the route's (127.0.0.1) is used; one line per pong,
     * numbered from 1, then the summary. The first pong waits for the TCP connection and two JVMs on a loaded
     * machine, so each ping may wait a minute (--timeout): a slow first pong is printed when it comes, a missing
     * one still fails the test.
     */
    @Test
    void pingGetsThreePongsFromTheHostOfAnEchoTool() throws Exception {
        String tcpPort = Integer.toString(ToolProcess.freeTcpPort());
        ToolProcess echo = start("echo", "--bind", "127.0.0.2:4000", "--tcp-port", tcpPort);
        echo.awaitLine(l -> l.startsWith("echo: listening on 127.0.0.2:4000"), STARTUP);
        ToolProcess ping = start("ping", "-c", "3", "-i", "0.2", "--timeout", "60000", "--tcp-port", tcpPort,
                "127.0.0.2");

        assertEquals(0, ping.awaitExit(RUN), ping.describe());
        List<String> lines = ping.stdout();
        assertEquals(4, lines.size(), ping.describe());
        Pattern reply = Pattern.compile("^   ([1-3]): \\d+ usec$");
        assertEquals(Set.of("1", "2", "3"), lines.subList(0, 3).stream().map(reply::matcher)
                .filter(Matcher::matches).map(m -> m.group(1)).collect(Collectors.toSet()), ping.describe());
        assertTrue(Pattern.matches("^ping: 3 sent, 3 received, 0% loss, min/avg/max \\d+/\\d+/\\d+ usec, "
                + "127\\.0\\.0\\.1 to 127\\.0\\.0\\.2$", lines.get(3)), ping.describe());

        // SIGTERM ends echo with a summary and status 0.
        echo.terminate();
        assertEquals(0, echo.awaitExit(RUN), echo.describe());
        assertTrue(echo.stdout().stream().anyMatch(l -> l.startsWith("echo: ") && l.contains("echoed")),
                echo.describe());
    }

    /** With no RDS host at the address, no pong comes: no reply lines, 100% loss, exit status 1. */
    @Test
    void pingWithoutAHostExitsOne() throws Exception {
        String tcpPort = Integer.toString(ToolProcess.freeTcpPort());
        ToolProcess ping = start("ping", "--count", "2", "--interval", "100", "--timeout", "1500",
                "--bind", "127.0.0.1", "--tcp-port", tcpPort, "127.0.0.3");

        assertEquals(1, ping.awaitExit(RUN), ping.describe());
        assertEquals(List.of("ping: 2 sent, 0 received, 100% loss, min/avg/max 0/0/0 usec, 127.0.0.1 to 127.0.0.3"),
                ping.stdout(), ping.describe());
    }

    /**
     * IPv6: ::1 is the only IPv6 loopback address here, so the ping's stack, bound to ::1 by the route rule, is
     * also the host that answers (as the kernel answers a ping to its own address). The addresses print short.
     */
    @Test
    void pingIpv6Loopback() throws Exception {
        assumeTrue(PingCommandTest.ipv6(), "no IPv6 on this machine");
        String tcpPort = Integer.toString(ToolProcess.freeTcpPort());
        ToolProcess ping = start("ping", "-c", "2", "-i", "100ms", "--tcp-port", tcpPort, "::1");

        assertEquals(0, ping.awaitExit(RUN), ping.describe());
        List<String> lines = ping.stdout();
        assertEquals(3, lines.size(), ping.describe());
        assertTrue(Pattern.matches("^   1: \\d+ usec$", lines.get(0)), ping.describe());
        assertTrue(Pattern.matches("^   2: \\d+ usec$", lines.get(1)), ping.describe());
        assertTrue(lines.get(2).startsWith("ping: 2 sent, 2 received, 0% loss, ")
                && lines.get(2).endsWith(" usec, ::1 to ::1"), ping.describe());
    }

    @Test
    void sendExpectingEchoesFromAnEchoTool() throws Exception {
        String tcpPort = Integer.toString(ToolProcess.freeTcpPort());
        ToolProcess echo = start("echo", "--bind", "127.0.0.2:4000", "--tcp-port", tcpPort);
        echo.awaitLine(l -> l.startsWith("echo: listening on"), STARTUP);
        ToolProcess send = start("send", "--bind", "127.0.0.1:0", "--to", "127.0.0.2:4000", "--count", "20000",
                "--size", "300", "--expect-echo", "--timeout", "150", "--tcp-port", tcpPort);

        assertEquals(0, send.awaitExit(RUN), send.describe());
        assertTrue(send.stdout().stream().anyMatch(l -> l.startsWith("send: OK: 20000 messages")
                && l.contains("echoes: 20000 received, 0 lost, 0 duplicate, 0 reordered, 0 corrupt, 0 unexpected")),
                send.describe());
    }

    @Test
    void recvTimesOutWithoutASender() throws Exception {
        String tcpPort = Integer.toString(ToolProcess.freeTcpPort());
        ToolProcess recv = start("recv", "--bind", "127.0.0.2:4000", "--count", "1", "--timeout", "1",
                "--tcp-port", tcpPort);
        assertEquals(1, recv.awaitExit(RUN), recv.describe());
        assertTrue(recv.stderr().contains("timed out after 0 of 1 messages"), recv.describe());
    }

    @ParameterizedTest
    @ValueSource(strings = {"loopback", "tcp"})
    void stressRunsCleanlyAndSummarizes(String transport) throws Exception {
        String tcpPort = Integer.toString(ToolProcess.freeTcpPort());
        ToolProcess stress = start("stress", "--duration", "2", "--warmup", "0.2", "--transport", transport,
                "--tcp-port", tcpPort);

        assertEquals(0, stress.awaitExit(RUN), stress.describe());
        assertTrue(stress.stdout().get(0).startsWith("stress: 4 socket pairs 127.0.0.1 <-> 127.0.0.2 (ports 4001-4004),"
                + " transport " + transport + ", tcp port " + tcpPort + ", 8 paths,"), stress.describe());
        assertTrue(stress.stdout().get(0).endsWith(", 2.00 s measured after 0.20 s warmup or more"), stress.describe());
        Pattern summary = Pattern.compile("^stress: OK: [1-9]\\d* messages \\([1-9]\\d* round trips\\) .* "
                + "rtt p50 \\d+ us p99 \\d+ us max \\d+ us, 0 errors$");
        assertTrue(stress.stdout().stream().anyMatch(l -> summary.matcher(l).matches()), stress.describe());
    }

    /**
     * {@code stress --pin}: once it says so, every thread of host A (requesters, stack A's) may run on the first CPU
     * only and every thread of host B on the second, as the kernel reports each thread's {@code Cpus_allowed_list}.
     * Skipped where threads cannot be placed (not Linux, no taskset, fewer than two CPUs).
     */
    @Test
    void stressPinsEachHostsThreadsToACpuOfItsOwn() throws Exception {
        ThreadPlacement placement;
        try {
            placement = ThreadPlacement.onThisMachine();
        } catch (IllegalStateException e) {
            assumeTrue(false, "placement not possible here: " + e.getMessage());
            return;
        }
        String tcpPort = Integer.toString(ToolProcess.freeTcpPort());
        ToolProcess stress = start("stress", "--pin", "--duration", "2", "--warmup", "0", "--tcp-port", tcpPort);
        stress.awaitLine(l -> l.startsWith("stress: host A's threads"), STARTUP);

        Map<String, List<String>> cpusByHost = new TreeMap<>();
        try (DirectoryStream<Path> tasks = Files.newDirectoryStream(Path.of("/proc/" + stress.pid() + "/task"))) {
            for (Path task : tasks) {
                String comm = Files.readString(task.resolve("comm"), StandardCharsets.UTF_8).strip();
                String host = comm.startsWith("stress-request-") || comm.startsWith("rds4j-stress-a-") ? "A"
                        : comm.startsWith("stress-echo-") || comm.startsWith("rds4j-stress-b-") ? "B" : null;
                if (host != null) {
                    String status = Files.readString(task.resolve("status"), StandardCharsets.US_ASCII);
                    cpusByHost.computeIfAbsent(host, h -> new ArrayList<>())
                            .add(comm + " " + ThreadPlacement.allowedCpus(status));
                }
            }
        }
        // Four application threads and at least the I/O and timer threads of its stack on each host.
        for (String host : List.of("A", "B")) {
            List<String> threads = cpusByHost.getOrDefault(host, List.of());
            assertTrue(threads.size() >= 6, host + ": " + threads);
            String cpu = "[" + placement.cpu(host.equals("A")) + "]";
            assertTrue(threads.stream().allMatch(t -> t.endsWith(" " + cpu)), host + " on " + cpu + ": " + threads);
        }
        assertEquals(0, stress.awaitExit(RUN), stress.describe());
        assertTrue(stress.stdout().stream().anyMatch(l -> l.startsWith("stress: OK:")), stress.describe());
    }
}
