package org.rds4j.interop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.rds4j.RdsDatagram;
import org.rds4j.RdsSocket;
import org.rds4j.RdsSocketOptions;
import org.rds4j.RdsStack;
import org.rds4j.RdsStackConfig;
import org.rds4j.core.wire.CodecFrames;
import org.rds4j.core.wire.CodecFrames.Frame;
import org.rds4j.core.wire.CodecFrames.Stream;
import org.rds4j.tools.PayloadPattern;
import org.rds4j.wireshark.DissectorCheck;
import org.rds4j.wireshark.Tshark;

/**
 * The Wireshark dissector over rds4j's own traffic with the kernel: tcpdump records, on the namespace's bridge, a
 * fresh rds4j stack exchanging messages of every size with the guest's echo agent and pinging it; then the same
 * check as the golden captures (rds-wireshark's {@link DissectorCheck}): no malformed packet or Lua error, and every
 * message tshark dissects equal to what rds4j's codec reads from the file. The capture is kept as
 * {@code target/dissector-interop.pcap}.
 */
@ExtendWith({ScenarioReport.class, GuestBreakdown.class})
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class CapturedTrafficDissectorTest {
    private static final int[] SIZES = {0, 1, 100, 4096, 65536, 1 << 20};
    private static final String BRIDGE = "rds4jbr0";

    /** A running tcpdump: the process, the thread reading its stderr, and what it printed. */
    private record Capture(Process process, Thread drain, StringBuffer log) {
    }

    @Test
    @DisplayName("scenario 8: the Wireshark dissector reads captured rds4j-kernel traffic as rds4j's codec does")
    void dissectorReadsRds4jKernelTrafficAsTheCodecDoes() throws Exception {
        Assumptions.assumeTrue(Guest.available(), "no kernel guest: the suite runs through interop/linux");
        Path tshark = Tshark.require();
        InetAddress low = InetAddress.getByName(System.getenv("RDS4J_HOST_ADDR"));
        InetAddress guest = InetAddress.getByName(Guest.address());
        Path target = Paths.get("target").toAbsolutePath();
        Path pcap = target.resolve("dissector-interop.pcap");
        Files.deleteIfExists(pcap);

        Capture tcpdump = startCapture(pcap);
        try {
            exchange(low, guest);
        } finally {
            stopCapture(tcpdump);
        }
        // a packet lost by the capture (not by the network) leaves a hole that no reader can frame across
        for (Stream st : CodecFrames.read(Files.readAllBytes(pcap), DissectorCheck.RDS_TCP_PORT).values()) {
            assertTrue(!st.fromStart() || st.holes() == 0, "the capture missed packets of " + st.name()
                    + " (tcpdump dropped them?); nothing to compare across the hole: " + tcpdump.log());
        }

        Path work = Files.createDirectories(target.resolve("dissector-interop"));
        DissectorCheck.Result r = DissectorCheck.check(tshark, pcap, work, DissectorCheck.RDS_TCP_PORT, true);
        Map<String, Integer> kinds = new TreeMap<>();
        for (Stream s : r.codec().values()) {
            for (Frame f : s.frames()) {
                kinds.merge(f.kind(), 1, Integer::sum);
            }
        }
        System.out.println("KERNEL-INTEROP dissector: " + r.summary() + "; kinds " + kinds);
        // what went both ways: six sizes each way, the ping and its pong
        assertTrue(kinds.getOrDefault("DATA", 0) >= 2 * SIZES.length, "data both ways: " + kinds);
        assertTrue(kinds.getOrDefault("PING", 0) >= 1 && kinds.getOrDefault("PONG", 0) >= 1, "ping, pong: " + kinds);
        // rds4j's multipath probe carries three extension headers (NPATHS, GEN_NUM, SPORT_IDX), as 7.x kernels do
        String ours = low.getHostAddress() + ":";
        assertTrue(r.codec().values().stream().filter(s -> s.name().startsWith(ours))
                .flatMap(s -> s.frames().stream())
                .anyMatch(f -> f.kind().equals("PROBE_PING") && f.exthdrs().matches("5:0008 6:[0-9a-f]{8} 8:00")),
                "rds4j's probe ping with NPATHS=8 (the default), GEN_NUM and SPORT_IDX: " + r.codec());
    }

    /** A fresh stack at {@code low}: every size to the guest's echo agent and back, then a ping. */
    private static void exchange(InetAddress low, InetAddress guest) throws Exception {
        Guest.start("s8", "rdsagent echo " + guest.getHostAddress() + ":4800");
        try (RdsStack s = RdsStack.create(RdsStackConfig.builder().name("rds4j-capture").address(low)
                .defaultTransport("tcp").build())) {
            Guest.expect("s8", "ECHO ready", Duration.ofSeconds(30));
            RdsSocket sock = s.openSocket();
            sock.setOption(RdsSocketOptions.SO_SNDBUF, 4 << 20);
            sock.setOption(RdsSocketOptions.SO_RCVBUF, 4 << 20);
            sock.bind(new InetSocketAddress(low, 5800));
            InetSocketAddress echo = new InetSocketAddress(guest, 4800);
            for (int k = 0; k < SIZES.length; k++) {
                ByteBuffer b = ByteBuffer.allocate(SIZES[k]);
                PayloadPattern.fill(b, k, SIZES[k]);
                sock.send(b.flip(), echo);
                int want = k;
                RdsDatagram d = sock.receive(Duration.ofSeconds(60)).orElseThrow(
                        () -> new AssertionError("echo of message " + want + " never arrived"));
                assertEquals(echo, d.source());
                assertEquals(SIZES[k], d.length());
            }
            RdsSocket ping = s.openSocket();
            ping.bind(new InetSocketAddress(low, 0));
            ping.send(ByteBuffer.allocate(0), new InetSocketAddress(guest, 0));
            RdsDatagram pong = ping.receive(Duration.ofSeconds(30)).orElseThrow(
                    () -> new AssertionError("no pong from the kernel"));
            assertEquals(0, pong.length());
        } finally {
            Guest.kill("s8");
        }
    }

    /** tcpdump on the namespace's bridge (this JVM runs in the namespace); returns once it is capturing. */
    private static Capture startCapture(Path pcap) throws IOException, InterruptedException {
        // a 64 MiB buffer holds the whole exchange, so a busy machine cannot make tcpdump drop packets
        List<String> cmd = List.of("tcpdump", "-i", BRIDGE, "-U", "--immediate-mode", "-B", "65536", "-s", "0",
                "-w", pcap.toString(), "tcp", "port", String.valueOf(DissectorCheck.RDS_TCP_PORT));
        Process p;
        try {
            p = new ProcessBuilder(cmd).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        } catch (IOException e) {
            throw new AssertionError("cannot run tcpdump (interop/linux/setup.sh installs it): " + e, e);
        }
        BufferedReader err = new BufferedReader(new InputStreamReader(p.getErrorStream(), StandardCharsets.UTF_8));
        // tcpdump says "listening on <if>" once the capture is open; the wait for it is bounded
        CompletableFuture<String> listening = CompletableFuture.supplyAsync(() -> {
            StringBuilder seen = new StringBuilder();
            try {
                for (String line; (line = err.readLine()) != null; ) {
                    seen.append(line).append('\n');
                    if (line.contains("listening on")) {
                        return null;
                    }
                }
            } catch (IOException e) {
                seen.append(e);
            }
            return seen.toString();
        });
        String problem;
        try {
            problem = listening.get(30, TimeUnit.SECONDS);
        } catch (TimeoutException | java.util.concurrent.ExecutionException e) {
            problem = "no \"listening on\" from tcpdump within 30 s: " + e;
        }
        if (problem != null) {
            p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            fail("tcpdump did not start capturing on " + BRIDGE + ": " + problem);
        }
        // keep draining its stderr so that it never blocks on a full pipe; what it prints is kept for failures
        StringBuffer log = new StringBuffer();
        Thread drain = new Thread(() -> {
            try {
                for (String line; (line = err.readLine()) != null; ) {
                    log.append(line).append('\n');
                }
            } catch (IOException ignored) {
                // tcpdump is gone
            }
        }, "tcpdump-stderr");
        drain.setDaemon(true);
        drain.start();
        return new Capture(p, drain, log);
    }

    /**
     * SIGTERM (tcpdump writes out what it has, prints its counts and exits), KILL if it does not within 10 s; then
     * waits (bounded) until its stderr is read to the end.
     */
    private static void stopCapture(Capture c) throws InterruptedException {
        c.process().destroy();
        if (!c.process().waitFor(10, TimeUnit.SECONDS)) {
            c.process().destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
        c.drain().join(10_000);
    }
}
