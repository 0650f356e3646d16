package org.rds4j.tools;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.DataInputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.rds4j.RdsDatagram;
import org.rds4j.RdsSocket;
import org.rds4j.RdsStack;
import org.rds4j.RdsStackConfig;

/**
 * {@code rds4j rds-stress} over real TCP on 127.0.0.1 and 127.0.0.2, each side in its own JVM as a user runs it, and
 * against peers this test plays by hand from the wire formats (so a mistake shared by both rds4j sides still shows).
 * Bounds are generous: two cores build, test and run several JVMs at once; no verdict depends on speed.
 */
class RdsStressEndToEndTest {
    private static final Duration STARTUP = Duration.ofSeconds(60);
    private static final Duration RUN = Duration.ofSeconds(120);
    private static final Pattern SECOND_LINE =
            Pattern.compile("^\\s+(\\d+)\\s+(\\d+)\\s+(\\d+)\\s+[\\d.]+\\s+0\\.00\\s+0\\.00\\s+[\\d.]+\\s+[\\d.]+\\s+-?[\\d.]+$");
    private static final Pattern TOTALS =
            Pattern.compile("^totals: requests sent (\\d+) received (\\d+), acks sent (\\d+) received (\\d+)$");

    @Test
    void rds4jPassiveAndActiveAgreeOnEveryMessage() throws Exception {
        String control = String.valueOf(ToolProcess.freeTcpPort());
        String tcpPort = String.valueOf(ToolProcess.freeTcpPort());
        int tasks = 2;
        int depth = 8;
        try (ToolProcess passive = ToolProcess.start("rds-stress", "-r", "127.0.0.1", "-p", control,
                "--tcp-port", tcpPort, "--message-counts")) {
            passive.awaitLine(l -> l.startsWith("waiting for incoming connection on 127.0.0.1:" + control), STARTUP);
            try (ToolProcess active = ToolProcess.start("rds-stress", "-r", "127.0.0.2", "-s", "127.0.0.1", "-p",
                    control, "--tcp-port", tcpPort, "-v", "-t", String.valueOf(tasks), "-d", String.valueOf(depth),
                    "-T", "2", "--message-counts")) {
                assertEquals(0, active.awaitExit(RUN), active.describe());
                assertEquals(0, passive.awaitExit(RUN), passive.describe());
                long[] a = totals(active);
                long[] p = totals(passive);
                // Each of the tasks * tasks flows per direction has at most depth requests outstanding: what one
                // side sent and the other never took is bounded by that, however the run was timed.
                long window = (long) tasks * tasks * depth;
                assertTrue(a[0] > 0 && p[0] > 0, active.describe() + passive.describe());
                assertInWindow(a[0], p[1], window, "active's requests", active, passive);
                assertInWindow(p[0], a[1], window, "passive's requests", active, passive);
                // Every request taken was acked; acks in flight are bounded the same way.
                assertInWindow(p[2], a[3], window, "passive's acks", active, passive);
                assertInWindow(a[2], p[3], window, "active's acks", active, passive);

                List<long[]> lines = seconds(active);
                assertEquals(2, lines.size(), active.describe());
                long sum = 0;
                for (long[] l : lines) {
                    assertEquals(tasks, l[0]);
                    assertTrue(l[1] > 0 && l[2] > 0, "traffic every second\n" + active.describe());
                    sum += l[1];
                }
                // The start-up seconds also carry traffic: the lines count only the measured ones.
                assertTrue(sum <= a[0], active.describe());
                assertTrue(active.stdout().stream().anyMatch(l -> l.endsWith("(average)")), active.describe());
                assertTrue(passive.stdout().stream().anyMatch(l -> l.endsWith("(average)")), passive.describe());
                assertTrue(passive.stdout().stream().anyMatch(l -> l.startsWith("accepted connection from 127.0.0.2:")),
                        passive.describe());
                assertFalse((active.describe() + passive.describe()).contains("An incoming message"));
            }
        }
    }

    private static void assertInWindow(long sent, long received, long window, String what, ToolProcess active,
            ToolProcess passive) {
        assertTrue(received <= sent && sent - received <= window, what + ": sent " + sent + ", received " + received
                + ", window " + window + "\n" + active.describe() + "\n" + passive.describe());
    }

    private static long[] totals(ToolProcess p) {
        for (String l : p.stdout()) {
            Matcher m = TOTALS.matcher(l);
            if (m.matches()) {
                return new long[] {Long.parseLong(m.group(1)), Long.parseLong(m.group(2)),
                        Long.parseLong(m.group(3)), Long.parseLong(m.group(4))};
            }
        }
        throw new AssertionError("no totals line\n" + p.describe());
    }

    /** The per-second lines: tasks, tx/s, rx/s. */
    private static List<long[]> seconds(ToolProcess p) {
        List<long[]> out = new ArrayList<>();
        for (String l : p.stdout()) {
            Matcher m = SECOND_LINE.matcher(l);
            if (m.matches()) {
                out.add(new long[] {Long.parseLong(m.group(1)), Long.parseLong(m.group(2)),
                        Long.parseLong(m.group(3))});
            }
        }
        return out;
    }

    /**
     * This test is the active side: it sends the older options record (one task, depth 1, -v, -o so the passive side
     * sends no requests of its own), one good request, checks the ack byte for byte, then one bad request. The
     * passive side must report it and exit 1.
     */
    @ParameterizedTest
    @ValueSource(strings = {"payload", "sequence"})
    void passiveSideExitsNonZeroOnAVerificationError(String corrupt) throws Exception {
        int control = ToolProcess.freeTcpPort();
        int tcpPort = ToolProcess.freeTcpPort();
        InetAddress passiveAddr = InetAddress.getByName("127.0.0.1");
        InetAddress activeAddr = InetAddress.getByName("127.0.0.2");
        int reqSize = 100;
        try (ToolProcess passive = ToolProcess.start("rds-stress", "-r", "127.0.0.1", "-p", String.valueOf(control),
                "--tcp-port", String.valueOf(tcpPort))) {
            passive.awaitLine(l -> l.startsWith("waiting for incoming connection"), STARTUP);
            RdsStressOptions o = RdsStressOptions.defaults();
            o.sendAddr = 0x7f000001L;
            o.receiveAddr = 0x7f000002L;
            o.startingPort = control;
            o.reqSize = reqSize;
            o.verify = 1;
            o.simplex = 1;
            try (Socket c = new Socket();
                 RdsStack stack = RdsStack.create(RdsStackConfig.builder().name("hand-made-active")
                         .address(activeAddr).tcpPort(tcpPort).build())) {
                c.bind(new InetSocketAddress(activeAddr, 0));
                c.connect(new InetSocketAddress(passiveAddr, control), 30_000);
                c.setSoTimeout(60_000);
                OutputStream cout = c.getOutputStream();
                InputStream cin = c.getInputStream();
                cout.write(o.encode());
                RdsSocket s = stack.openSocket();
                s.bind(new InetSocketAddress(activeAddr, control + 1));
                cout.write(1);
                cout.flush();
                assertTrue(cin.read() >= 0, "the passive side answers the go byte");

                InetSocketAddress peer = new InetSocketAddress(passiveAddr, control + 1);
                ByteBuffer req = ByteBuffer.allocate(reqSize);
                req.position(RdsStressHeader.BYTES);
                req.put(RdsStressHeader.pattern(reqSize - RdsStressHeader.BYTES));
                RdsStressHeader.write(req, 0, 0x7f000002, 0x7f000001, control + 1, control + 1, 0,
                        RdsStressHeader.OP_REQ);
                s.send(req.clear(), peer);

                RdsDatagram ack = s.receive(Duration.ofSeconds(60)).orElseThrow(
                        () -> new AssertionError("no ack\n" + passive.describe()));
                assertEquals(RdsDatagram.Kind.DATA, ack.kind());
                byte[] expected = new byte[RdsStressHeader.BYTES];
                RdsStressHeader.write(ByteBuffer.wrap(expected), 0, 0x7f000001, 0x7f000002, control + 1, control + 1,
                        0, RdsStressHeader.OP_ACK);
                byte[] got = new byte[ack.payload().remaining()];
                ack.payload().get(got);
                assertArrayEquals(expected, got, "the ack: seq 0, from the passive task, index 0, op 2, 63 bytes");
                assertEquals(peer, ack.source());

                int seq = 1;
                if (corrupt.equals("payload")) {
                    req.put(RdsStressHeader.BYTES + 10, (byte) ~req.get(RdsStressHeader.BYTES + 10));
                    req.put(RdsStressHeader.BYTES + 11, (byte) ~req.get(RdsStressHeader.BYTES + 11));
                } else {
                    seq = 7;
                }
                RdsStressHeader.write(req, seq, 0x7f000002, 0x7f000001, control + 1, control + 1, 0,
                        RdsStressHeader.OP_REQ);
                s.send(req.clear(), peer);
                assertEquals(1, passive.awaitExit(RUN), passive.describe());
                String outText = String.join("\n", passive.stdout());
                if (corrupt.equals("payload")) {
                    assertTrue(outText.contains("An incoming message has a corrupted payload at offset 10; "
                            + "2 out of " + (reqSize - RdsStressHeader.BYTES) + " bytes corrupted"), passive.describe());
                } else {
                    assertTrue(outText.contains("didn't contain the fields we expected"), passive.describe());
                    assertTrue(outText.matches("(?s).*\\n\\s+seq\\s+1 !=\\s+7\\n.*"), passive.describe());
                }
                assertTrue(passive.stderr().contains("header from 127.0.0.2:" + (control + 1) + " to id "
                        + (control + 1) + " bogus"), passive.describe());
            }
        }
    }

    /**
     * This test is the passive side, over RDS too: the active side's first request must be exactly rds-stress's bytes
     * (header and pattern), and an ack with a corrupted payload must make the active side exit 1.
     */
    @Test
    void activeSideSendsExactRequestsAndExitsNonZeroOnACorruptAck() throws Exception {
        int tcpPort = ToolProcess.freeTcpPort();
        InetAddress passiveAddr = InetAddress.getByName("127.0.0.1");
        int reqSize = 100;
        int ackSize = 90;
        try (ServerSocket listener = new ServerSocket(0, 1, passiveAddr);
             RdsStack stack = RdsStack.create(RdsStackConfig.builder().name("hand-made-passive")
                     .address(passiveAddr).tcpPort(tcpPort).build())) {
            int control = listener.getLocalPort();
            RdsSocket s = stack.openSocket();
            s.bind(new InetSocketAddress(passiveAddr, control + 1));
            try (ToolProcess active = ToolProcess.start("rds-stress", "-r", "127.0.0.2", "-s", "127.0.0.1", "-p",
                    String.valueOf(control), "-q", String.valueOf(reqSize), "-a", String.valueOf(ackSize), "-v", "-o",
                    "--tcp-port", String.valueOf(tcpPort))) {
                listener.setSoTimeout((int) STARTUP.toMillis());
                try (Socket c = listener.accept()) {
                    c.setSoTimeout((int) STARTUP.toMillis());
                    DataInputStream cin = new DataInputStream(c.getInputStream());
                    byte[] record = new byte[RdsStressOptions.V1_BYTES];
                    cin.readFully(record);
                    assertEquals(1, RdsStressOptions.decode(record).simplex);
                    assertTrue(cin.read() >= 0, "the go byte");
                    c.getOutputStream().write(1);
                    c.getOutputStream().flush();

                    RdsDatagram req = s.receive(Duration.ofSeconds(60)).orElseThrow(
                            () -> new AssertionError("no request\n" + active.describe()));
                    byte[] expected = new byte[reqSize];
                    ByteBuffer e = ByteBuffer.wrap(expected);
                    RdsStressHeader.write(e, 0, 0x7f000002, 0x7f000001, control + 1, control + 1, 0,
                            RdsStressHeader.OP_REQ);
                    System.arraycopy(RdsStressHeader.pattern(reqSize - RdsStressHeader.BYTES), 0, expected,
                            RdsStressHeader.BYTES, reqSize - RdsStressHeader.BYTES);
                    byte[] got = new byte[req.payload().remaining()];
                    req.payload().get(got);
                    assertArrayEquals(expected, got, "request 0: header, then the pattern");

                    ByteBuffer ack = ByteBuffer.allocate(ackSize);
                    ack.position(RdsStressHeader.BYTES);
                    ack.put(RdsStressHeader.pattern(ackSize - RdsStressHeader.BYTES));
                    RdsStressHeader.write(ack, 0, 0x7f000001, 0x7f000002, control + 1, control + 1, 0,
                            RdsStressHeader.OP_ACK);
                    ack.put(RdsStressHeader.BYTES + 3, (byte) ~ack.get(RdsStressHeader.BYTES + 3));
                    s.send(ack.clear(), req.source());
                    assertEquals(1, active.awaitExit(RUN), active.describe());
                }
                assertTrue(String.join("\n", active.stdout()).contains("An incoming message has a corrupted payload "
                        + "at offset 3; 1 out of " + (ackSize - RdsStressHeader.BYTES) + " bytes corrupted"),
                        active.describe());
                assertTrue(active.stderr().contains("bogus"), active.describe());
            }
        }
    }

    /** This test is the passive side: the active side's record must be the C struct's bytes, in the order sent. */
    @Test
    void activeSideSendsTheOlderRecordAndWaitsForTheGoByte() throws Exception {
        try (ServerSocket listener = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
            int control = listener.getLocalPort();
            try (ToolProcess active = ToolProcess.start("rds-stress", "-r", "127.0.0.2", "-s", "127.0.0.1", "-p",
                    String.valueOf(control), "-t", "2", "-d", "8", "-q", "2k", "-v", "-T", "10", "--tcp-port",
                    String.valueOf(ToolProcess.freeTcpPort()))) {
                listener.setSoTimeout((int) STARTUP.toMillis());
                try (Socket c = listener.accept()) {
                    c.setSoTimeout((int) STARTUP.toMillis());
                    byte[] record = new byte[RdsStressOptions.V1_BYTES];
                    new DataInputStream(c.getInputStream()).readFully(record);
                    RdsStressOptions o = RdsStressOptions.decode(record);
                    assertEquals(8, o.reqDepth);
                    assertEquals(2048, o.reqSize);
                    assertEquals(63, o.ackSize);
                    assertEquals(0x7f000001L, o.sendAddr);
                    assertEquals(0x7f000002L, o.receiveAddr);
                    assertEquals(control, o.startingPort);
                    assertEquals(2, o.nrTasks);
                    assertEquals(10, o.runTime);
                    assertEquals(1, o.verify);
                    assertEquals(1, c.getInputStream().read(), "then the go byte");
                    // Hang up instead of answering: the active side must say so and fail.
                }
                assertEquals(1, active.awaitExit(RUN), active.describe());
                assertTrue(active.stderr().contains("Peer unexpectedly closed connection"), active.describe());
            }
        }
    }

    /**
     * A peer asking for what RDS over TCP in rds4j lacks gets a clear refusal, and no traffic: RDMA in the older
     * record, type of service in the newer one (77 bytes, version string first), which also shows that the passive
     * side tells the two records apart on the wire.
     */
    @ParameterizedTest
    @ValueSource(strings = {"rdma", "tos"})
    void passiveSideRefusesWhatItCannotHonour(String ask) throws Exception {
        int control = ToolProcess.freeTcpPort();
        try (ToolProcess passive = ToolProcess.start("rds-stress", "-r", "127.0.0.1", "-p", String.valueOf(control),
                "--tcp-port", String.valueOf(ToolProcess.freeTcpPort()))) {
            passive.awaitLine(l -> l.startsWith("waiting for incoming connection"), STARTUP);
            RdsStressOptions o = RdsStressOptions.defaults();
            o.sendAddr = 0x7f000001L;
            o.receiveAddr = 0x7f000002L;
            o.startingPort = control;
            if (ask.equals("rdma")) {
                o.rdmaSize = 4096;
            } else {
                o.tos = 1;
            }
            byte[] record = o.encode();
            assertEquals(ask.equals("rdma") ? RdsStressOptions.V1_BYTES : RdsStressOptions.V2_BYTES, record.length);
            try (Socket c = new Socket()) {
                c.bind(new InetSocketAddress(InetAddress.getByName("127.0.0.2"), 0));
                c.connect(new InetSocketAddress(InetAddress.getByName("127.0.0.1"), control), 30_000);
                c.getOutputStream().write(record);
                c.getOutputStream().flush();
                assertEquals(1, passive.awaitExit(RUN), passive.describe());
                assertTrue(passive.stderr().contains(ask.equals("rdma") ? "RDMA (-D 4096)" : "type of service 1"),
                        passive.describe());
            }
        }
    }
}
