package org.rds4j.interop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.net.InetAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The kernel world's own tools (oracle/rds-tools 2.0.7: {@code rds-ping}, {@code rds-info}, {@code rds-stress}),
 * run in the guest as its users run them, against rds4j's tools ({@code ./rds4j echo}, {@code ./rds4j rds-stress})
 * each in a JVM of its own in the harness's namespace. rds4j is 10.213.0.9, the larger address, where the kernel
 * opens the 8 connections; 10.213.0.1 is left alone (single-lane resets there can keep a lane refused by a 6.12
 * kernel for a minute, docs/interop.md), and the class runs before KernelInteropTest, whose scenario 6b does those
 * (the suite's classes run in alphabetical order). The abort mid-run is of one connection: aborting all 8 at once
 * fails between two 6.1 kernels too (docs/interop.md, "rds-stress beside kernel to kernel"). setup.sh packs the tools
 * into the guest; without them these scenarios are skipped, saying so, except in CI, where that fails.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@ExtendWith({ScenarioReport.class, GuestBreakdown.class})
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class InteropWithRdsToolsTest {
    /** rds-stress's per-second line: tsks, tx/s, rx/s, then six decimal columns. */
    private static final Pattern SECOND = Pattern.compile(
            "\\s*(\\d+)\\s+(\\d+)\\s+(\\d+)(\\s+-?[\\d.]+){6}\\s*");
    /** Its closing line: the same columns and "(average)". */
    private static final Pattern AVERAGE = Pattern.compile(
            "\\s*(\\d+)\\s+(\\d+)\\s+(\\d+)(\\s+-?[\\d.]+){6}\\s+\\(average\\)\\s*");
    /** The options of every rds-stress run here: verified payloads, two tasks, eight requests in flight, 10 s. */
    private static final String STRESS = "-v -t 2 -d 8 -T 10";

    private static InetAddress rds4j;
    private static InetAddress guest;
    private static int dmesgLines;

    @BeforeAll
    static void guestHasTheTools() throws IOException {
        Assumptions.assumeTrue(Guest.available(), "no kernel guest: the suite runs through interop/linux");
        Guest.Result tools = Guest.run("for t in rds-ping rds-info rds-stress; do command -v $t || exit 1; done",
                Duration.ofSeconds(30));
        if (!tools.ok()) {
            String why = "the guest has no rds-tools (rds-stress, rds-ping, rds-info of oracle/rds-tools 2.0.7):"
                    + " see interop/linux/README.md, \"The kernel world's rds-tools\" (RDS4J_RDS_TOOLS)";
            if ("true".equals(System.getenv("CI"))) {
                fail(why + "; in CI these scenarios may not be skipped");
            }
            System.out.println("KERNEL-INTEROP: " + why + " - the rds-tools scenarios are SKIPPED");
            Assumptions.abort(why);
        }
        rds4j = InetAddress.getByName(System.getenv("RDS4J_HIGH_ADDR"));
        guest = InetAddress.getByName(Guest.address());
        dmesgLines = Guest.dmesg().split("\n").length;
    }

    @AfterEach
    void theKernelLoggedNoComplaint() {
        String[] log = Guest.dmesg().split("\n");
        List<String> fresh = List.of(log).subList(Math.min(dmesgLines, log.length), log.length);
        dmesgLines = log.length;
        List<String> complaints = Guest.rdsComplaints(String.join("\n", fresh));
        assertTrue(complaints.isEmpty(), "the guest kernel complained: " + complaints);
    }

    // ------------------------------------------------------------------------------------------------ scenario 13

    @Test
    @Order(10)
    @DisplayName("scenario 13: the kernel's rds-ping gets every pong from ./rds4j echo's stack; rds-info then shows the"
            + " connection up, with the TCP sockets this host sees")
    void rdsPingAndRdsInfoAgainstRds4jEcho() throws Exception {
        try (ToolJvm echo = echo(4980)) {
            // The first ping also makes the connection (the kernel, the smaller address, opens it): up to 10 s for it.
            Guest.Result first = Guest.run("rds-ping -c 1 -i 10 " + rds4j.getHostAddress(), Duration.ofSeconds(60));
            assertPongs(first, 1);
            Guest.Result r = Guest.run("rds-ping -c 5 -i 1 " + rds4j.getHostAddress(), Duration.ofSeconds(60));
            assertPongs(r, 5);
            System.out.println("KERNEL-INTEROP scenario 13: rds-ping " + rds4j.getHostAddress() + ":\n"
                    + r.output().stripTrailing());
            rdsInfoShowsTheConnection();
        }
    }

    /** rds-ping's lines " N: T usec", one for each of 1..count, no duplicate, error or other source, exit 0. */
    private static void assertPongs(Guest.Result r, int count) {
        assertEquals(0, r.exitCode(), "rds-ping: " + r);
        Pattern pong = Pattern.compile("\\s*(\\d+): (\\d+) usec");
        Set<Integer> seen = new TreeSet<>();
        for (String line : r.output().split("\n")) {
            if (line.isBlank()) {
                continue;
            }
            Matcher m = pong.matcher(line);
            assertTrue(m.matches(), "not a clean pong line (an error, a DUP!, another source?): '" + line + "' in " + r);
            assertTrue(seen.add(Integer.parseInt(m.group(1))), "pong " + m.group(1) + " twice: " + r);
        }
        Set<Integer> all = new TreeSet<>();
        for (int i = 1; i <= count; i++) {
            all.add(i);
        }
        assertEquals(all, seen, "a pong for every ping: " + r);
    }

    /**
     * rds-info -n -T while the echo is connected: the kernel opens rds4j's further paths after the probe's answer, so
     * this waits (bounded) until what rds-info lists under the connection is what this host's ss sees.
     */
    private static void rdsInfoShowsTheConnection() {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        String info = "";
        Set<String> kernelSide = Set.of();
        Set<String> hostSide = Set.of();
        while (System.nanoTime() < deadline) {
            Guest.Result r = Guest.run("rds-info -n -T", Duration.ofSeconds(30));
            assertEquals(0, r.exitCode(), "rds-info: " + r);
            info = r.output();
            kernelSide = rdsInfoTcp(info);
            hostSide = hostTcp();
            if (!kernelSide.isEmpty() && kernelSide.equals(hostSide) && connectionUp(info)) {
                break;
            }
        }
        assertTrue(connectionUp(info), "rds-info -n shows no connection " + guest.getHostAddress() + " -> "
                + rds4j.getHostAddress() + " with flag C:\n" + info);
        assertTrue(!kernelSide.isEmpty() && kernelSide.size() <= 8, "1 to 8 TCP sockets under it: " + info);
        assertEquals(hostSide, kernelSide, "rds-info -T lists the TCP connections this host has with the guest"
                + " on 16385 (guest port/host port):\n" + info);
        System.out.println("KERNEL-INTEROP scenario 13: rds-info -n -T:\n" + info.stripTrailing());
    }

    /** rds-info -n's line for the guest to rds4j has flag C (connected). */
    private static boolean connectionUp(String info) {
        for (String line : section(info, "RDS Connections:")) {
            String[] f = line.trim().split("\\s+");
            if (f.length >= 6 && f[0].equals(guest.getHostAddress()) && f[1].equals(rds4j.getHostAddress())
                    && f[f.length - 1].contains("C")) {
                return true;
            }
        }
        return false;
    }

    /** rds-info -T's sockets between the guest and rds4j, as "guestPort/rds4jPort". */
    private static Set<String> rdsInfoTcp(String info) {
        Set<String> found = new TreeSet<>();
        for (String line : section(info, "TCP Connections:")) {
            String[] f = line.trim().split("\\s+");
            if (f.length >= 4 && f[0].equals(guest.getHostAddress()) && f[2].equals(rds4j.getHostAddress())) {
                found.add(f[1] + "/" + f[3]);
            }
        }
        return found;
    }

    /** The lines of one section of rds-info's output, after its heading and column names. */
    private static List<String> section(String info, String heading) {
        List<String> lines = new ArrayList<>();
        boolean in = false;
        for (String line : info.split("\n")) {
            if (line.trim().equals(heading)) {
                in = true;
            } else if (in && line.trim().endsWith(":")) {
                break;
            } else if (in && !line.isBlank()) {
                lines.add(line);
            }
        }
        return lines;
    }

    /** This host's established TCP connections between rds4j and the guest on 16385, as "guestPort/rds4jPort". */
    private static Set<String> hostTcp() {
        Guest.Result r = Guest.exec(List.of("ss", "-Htn", "state", "established"), Duration.ofSeconds(10));
        Set<String> found = new TreeSet<>();
        for (String line : r.output().split("\n")) {
            String[] f = line.trim().replace("[::ffff:", "").replace("]", "").split("\\s+");
            if (f.length >= 4 && f[2].startsWith(rds4j.getHostAddress() + ":")
                    && f[3].startsWith(guest.getHostAddress() + ":")) {
                String local = f[2].substring(f[2].lastIndexOf(':') + 1);
                String remote = f[3].substring(f[3].lastIndexOf(':') + 1);
                if (local.equals("16385") || remote.equals("16385")) {
                    found.add(remote + "/" + local);
                }
            }
        }
        return found;
    }

    private static ToolJvm echo(int port) throws Exception {
        ToolJvm echo = ToolJvm.start("echo", "--bind", rds4j.getHostAddress() + ":" + port);
        try {
            echo.awaitLine("echo: listening on " + rds4j.getHostAddress() + ":" + port, Duration.ofSeconds(60));
        } catch (AssertionError | InterruptedException e) {
            echo.close();
            throw e;
        }
        return echo;
    }

    // ------------------------------------------------------------------------------------------------ scenario 14

    @Test
    @Order(30)
    @DisplayName("scenario 14a: the kernel's rds-stress passive, ./rds4j rds-stress active (" + STRESS + ")")
    void rds4jStressesTheKernel() throws Exception {
        rds4jActive(4982, rds4j, false);
    }

    @Test
    @Order(31)
    @DisplayName("scenario 14b: ./rds4j rds-stress passive, the kernel's rds-stress active (" + STRESS + ")")
    void theKernelStressesRds4j() throws Exception {
        kernelActive(4986, rds4j, false);
    }

    @Test
    @Order(32)
    @DisplayName("scenario 14c: as 14a, with its busiest RDS/TCP connection aborted mid-run")
    void rds4jStressesTheKernelAcrossAnAbort() throws Exception {
        rds4jActive(4990, rds4j, true);
    }

    @Test
    @Order(33)
    @DisplayName("scenario 14d: as 14b, with its busiest RDS/TCP connection aborted mid-run")
    void theKernelStressesRds4jAcrossAnAbort() throws Exception {
        kernelActive(4994, rds4j, true);
    }

    /** The guest's rds-stress waits on {@code port}; ./rds4j rds-stress connects to it and runs the test. */
    private void rds4jActive(int port, InetAddress local, boolean abort) throws Exception {
        String job = "s14-" + port;
        Guest.start(job, "rds-stress -r " + guest.getHostAddress() + " -p " + port);
        try {
            awaitGuestListening(port);
            try (ToolJvm active = ToolJvm.start(("rds-stress -r " + local.getHostAddress() + " -s "
                    + guest.getHostAddress() + " -p " + port + " " + STRESS).split(" "))) {
                int aborts = abort ? abortMidRun(active, local) : 0;
                int rc = active.awaitExit(Duration.ofSeconds(120));
                Guest.Result kernel = Guest.await(job, Duration.ofSeconds(60));
                compare("./rds4j rds-stress active", rc, active.output(), "the kernel's rds-stress passive", kernel,
                        aborts);
            }
        } finally {
            Guest.kill(job);
        }
    }

    /** ./rds4j rds-stress waits on {@code port}; the guest's rds-stress connects to it and runs the test. */
    private void kernelActive(int port, InetAddress local, boolean abort) throws Exception {
        String job = "s14-" + port;
        try (ToolJvm passive = ToolJvm.start("rds-stress", "-r", local.getHostAddress(), "-p",
                Integer.toString(port))) {
            passive.awaitLine("waiting for incoming connection on " + local.getHostAddress() + ":" + port,
                    Duration.ofSeconds(60));
            Guest.start(job, "rds-stress -r " + guest.getHostAddress() + " -s " + local.getHostAddress() + " -p "
                    + port + " " + STRESS);
            try {
                int aborts = abort ? abortMidRun(passive, local) : 0;
                Guest.Result kernel = Guest.await(job, Duration.ofSeconds(120));
                int rc = passive.awaitExit(Duration.ofSeconds(60));
                compare("./rds4j rds-stress passive", rc, passive.output(), "the kernel's rds-stress active", kernel,
                        aborts);
            } finally {
                Guest.kill(job);
            }
        }
    }

    /** Waits (bounded, in the guest) until its rds-stress listens on its control port. */
    private static void awaitGuestListening(int port) {
        Guest.Result r = Guest.run("i=0; until netstat -ltn | grep -q ':" + port + " '; do i=$((i+1));"
                + " [ $i -le 300 ] || exit 1; sleep 0.1; done", Duration.ofSeconds(60));
        assertEquals(0, r.exitCode(), "the guest's rds-stress never listened on " + port + ": " + r);
    }

    /**
     * Once rds4j's side has printed three seconds of traffic, the guest aborts the busiest of the RDS/TCP connections
     * to {@code local} (SOCK_DESTROY of that one, as scenario 6b does); rds-stress's control connection is another
     * port and stays.
     */
    private static int abortMidRun(ToolJvm rds4jSide, InetAddress local) throws InterruptedException {
        rds4jSide.awaitLines(SECOND.pattern(), 3, Duration.ofSeconds(60));
        int port = busiestLane(local);
        Guest.Result r = Guest.run("rdsagent kill-tcp " + port, Duration.ofSeconds(30));
        assertTrue(r.output().contains("destroyed=1"), "kill-tcp of the connection from port " + port + ": " + r);
        return 1;
    }

    /** The connecting side's port of the RDS/TCP connection to the guest that moved the most bytes (ss -i here). */
    private static int busiestLane(InetAddress local) {
        Guest.Result r = Guest.exec(List.of("ss", "-Htni", "state", "established"), Duration.ofSeconds(10));
        Pattern conn = Pattern.compile("\\S+\\s+\\S+\\s+\\[?(?:::ffff:)?([\\d.]+)\\]?:(\\d+)\\s+\\[?(?:::ffff:)?"
                + "([\\d.]+)\\]?:(\\d+)\\s*");
        Pattern acked = Pattern.compile("bytes_acked:(\\d+)");
        Pattern received = Pattern.compile("bytes_received:(\\d+)");
        int best = -1;
        long most = -1;
        int port = -1;
        for (String line : r.output().split("\n")) {
            Matcher m = conn.matcher(line);
            if (m.matches()) {
                boolean ours = m.group(1).equals(local.getHostAddress()) && m.group(3).equals(guest.getHostAddress())
                        && (m.group(2).equals("16385") || m.group(4).equals("16385"));
                // the port that names the connection: the one that is not 16385 (rds4j accepts on 16385)
                port = !ours ? -1 : Integer.parseInt(m.group(2).equals("16385") ? m.group(4) : m.group(2));
            } else if (port > 0) {
                Matcher a = acked.matcher(line);
                Matcher b = received.matcher(line);
                long moved = (a.find() ? Long.parseLong(a.group(1)) : 0) + (b.find() ? Long.parseLong(b.group(1)) : 0);
                if (moved > most) {
                    most = moved;
                    best = port;
                }
                port = -1;
            }
        }
        assertTrue(best > 0, "no RDS/TCP connection between " + local + " and the guest: " + r);
        return best;
    }

    /**
     * Both exit 0; every second of both has traffic each way; what one side sends a second, the other receives a
     * second: the mean of the per-second lines, as each side's own clock cut them (its start-up and burn-in, and so
     * its seconds, are its own), within a quarter.
     */
    private static void compare(String rds4jName, int rds4jRc, String rds4jOut, String kernelName,
            Guest.Result kernel, int aborts) {
        String both = rds4jName + " (exit " + rds4jRc + "):\n" + rds4jOut + "\n" + kernelName + " " + kernel;
        assertEquals(0, rds4jRc, both);
        assertEquals(0, kernel.exitCode(), both);
        long[] ours = seconds(rds4jName, rds4jOut, both);
        long[] theirs = seconds(kernelName, kernel.output(), both);
        assertAgree("a second's requests sent by rds4j, received by the kernel", ours[1] / ours[0],
                theirs[2] / theirs[0], both);
        assertAgree("a second's requests sent by the kernel, received by rds4j", theirs[1] / theirs[0],
                ours[2] / ours[0], both);
        System.out.println("KERNEL-INTEROP scenario 14: " + rds4jName + ": " + ours[0] + " s, requests sent "
                + ours[1] + ", received " + ours[2] + "; " + kernelName + ": " + theirs[0] + " s, sent " + theirs[1]
                + ", received " + theirs[2] + (aborts > 0 ? "; " + aborts + " RDS/TCP connection aborted mid-run" : "")
                + "\n  rds4j:  " + averageLine(rds4jOut) + "\n  kernel: " + averageLine(kernel.output()));
    }

    /** The per-second lines' count and sums of tx/s and rx/s; each line must show traffic both ways. */
    private static long[] seconds(String name, String output, String both) {
        long lines = 0;
        long tx = 0;
        long rx = 0;
        for (String line : output.split("\n")) {
            Matcher m = SECOND.matcher(line);
            if (!m.matches()) {
                continue;
            }
            lines++;
            long t = Long.parseLong(m.group(2));
            long r = Long.parseLong(m.group(3));
            assertTrue(t > 0 && r > 0, name + ": a second without traffic both ways: '" + line + "'\n" + both);
            tx += t;
            rx += r;
        }
        // -T 10: ten lines, fewer only where a loop of the tool took well over a second
        assertTrue(lines >= 5 && lines <= 12, name + ": " + lines + " per-second lines\n" + both);
        assertTrue(averageLine(output) != null, name + ": no average line\n" + both);
        return new long[] {lines, tx, rx};
    }

    private static String averageLine(String output) {
        return output.lines().filter(l -> AVERAGE.matcher(l).matches()).findFirst().map(String::trim).orElse(null);
    }

    private static void assertAgree(String what, long a, long b, String both) {
        assertTrue(a > 0 && b > 0 && Math.abs(a - b) <= Math.max(a, b) / 4, what + ": " + a + " against " + b
                + "\n" + both);
    }
}
