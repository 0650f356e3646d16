package org.rds4j.wireshark;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.File;
import java.io.IOException;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Assumptions;
import org.rds4j.core.wire.CodecFrames.Frame;

/**
 * Runs tshark with rds.lua over a capture and reads back, per packet, the dissector's fields. tshark runs with an
 * empty home directory (no personal plugins or preferences, so an installed copy of rds.lua cannot clash), with a
 * time limit, and is killed if it overruns.
 */
public final class Tshark {
    /** Expert severity "Error" in tshark's {@code _ws.expert.severity}: a Lua error or a malformed packet. */
    static final int SEVERITY_ERROR = 0x00800000;
    private static final long TIMEOUT_SECONDS = 300;

    /** The fields read for every packet, in order; multi-valued fields come joined by {@code |}. */
    private static final List<String> FIELDS = List.of("frame.number", "ip.src", "ipv6.src", "tcp.srcport", "ip.dst",
            "ipv6.dst", "tcp.dstport", "rds.seq", "rds.len", "rds.sport", "rds.dport", "rds.flags", "rds.exthdrs",
            "rds.kind", "_ws.malformed", "_ws.expert.severity", "_ws.col.Info", "_ws.expert.message");

    /** One packet: its TCP direction, the RDS messages dissected in it, and any trouble reported. */
    public record Packet(int number, String direction, List<Frame> frames, boolean malformed,
            List<Integer> severities, String info, String expertMessages) {
        boolean hasError() {
            return malformed || severities.stream().anyMatch(s -> s >= SEVERITY_ERROR)
                    || expertMessages.contains("Lua Error");
        }
    }

    private Tshark() {
    }

    /** The tshark executable: $TSHARK (null if that is not executable), else the first on the PATH, else null. */
    public static Path find() {
        String configured = System.getenv("TSHARK");
        if (configured != null && !configured.isBlank()) {
            Path p = Paths.get(configured);
            return Files.isExecutable(p) ? p : null;
        }
        for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
            Path p = Paths.get(dir.isEmpty() ? "." : dir, "tshark");
            if (Files.isExecutable(p)) {
                return p;
            }
        }
        return null;
    }

    /**
     * The tshark to use. Without one the test fails when the environment variable CI is set (CI must run the
     * check), and is skipped otherwise.
     */
    public static Path require() {
        Path tshark = find();
        if (tshark == null) {
            String message = "tshark is not installed (apt-get install tshark, or set TSHARK to its path): the"
                    + " Wireshark dissector rds.lua cannot be checked";
            if (System.getenv("CI") != null) {
                fail(message + "; CI is set, so this check must run (.ci/run installs tshark)");
            }
            Assumptions.assumeTrue(false, message + "; skipped (set CI to make this a failure)");
        }
        return tshark;
    }

    /** rds.lua in the source tree (the surefire configuration names it). */
    static Path dissector() {
        Path p = Paths.get(System.getProperty("rds4j.dissector", "src/main/lua/rds.lua")).toAbsolutePath();
        if (!Files.isRegularFile(p)) {
            fail("no dissector at " + p);
        }
        return p;
    }

    /** Dissects {@code capture} and returns every packet, RDS or not, in capture order. */
    static List<Packet> dissect(Path tshark, Path capture, Path work, String... options) throws IOException,
            InterruptedException {
        Path home = Files.createDirectories(work.resolve("home"));
        Path out = work.resolve("tshark.out");
        Path err = work.resolve("tshark.err");
        List<String> cmd = new ArrayList<>(List.of(tshark.toString(), "-n", "-X", "lua_script:" + dissector(),
                "-r", capture.toString()));
        cmd.addAll(Arrays.asList(options));
        cmd.addAll(List.of("-T", "fields", "-E", "header=n", "-E", "separator=/t", "-E", "occurrence=a",
                "-E", "aggregator=|"));
        for (String field : FIELDS) {
            cmd.add("-e");
            cmd.add(field);
        }
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectOutput(out.toFile()).redirectError(err.toFile());
        Map<String, String> env = pb.environment();
        env.put("HOME", home.toString());
        env.remove("XDG_CONFIG_HOME");
        env.remove("WIRESHARK_CONFIG_DIR");
        env.remove("WIRESHARK_PLUGIN_DIR");
        Process p = pb.start();
        try {
            if (!p.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                fail("tshark did not finish " + capture + " within " + TIMEOUT_SECONDS + " s: " + cmd);
            }
        } finally {
            if (p.isAlive()) {
                p.destroyForcibly();
                p.waitFor();
            }
        }
        String stderr = Files.readString(err, StandardCharsets.UTF_8);
        if (p.exitValue() != 0) {
            fail("tshark exited with " + p.exitValue() + " on " + capture + ": " + stderr);
        }
        // a dissector that fails to load leaves tshark running without it; its error goes to stderr
        for (String line : stderr.split("\n")) {
            if (line.contains("Lua") || line.contains("rds.lua")) {
                fail("tshark reported a problem with " + dissector() + ": " + stderr);
            }
        }
        List<Packet> packets = new ArrayList<>();
        for (String line : Files.readAllLines(out, StandardCharsets.UTF_8)) {
            if (!line.isEmpty()) {
                packets.add(parse(line));
            }
        }
        return packets;
    }

    private static Packet parse(String line) {
        String[] c = line.split("\t", -1);
        if (c.length != FIELDS.size()) {
            throw new IllegalStateException("tshark row with " + c.length + " fields, not " + FIELDS.size() + ": "
                    + line);
        }
        int number = Integer.parseInt(c[0]);
        String src = address(first(c[1]).isEmpty() ? first(c[2]) : first(c[1]));
        String dst = address(first(c[4]).isEmpty() ? first(c[5]) : first(c[4]));
        String direction = src + ":" + first(c[3]) + "->" + dst + ":" + first(c[6]);
        List<String> seq = values(c[7]);
        List<String> len = values(c[8]);
        List<String> sport = values(c[9]);
        List<String> dport = values(c[10]);
        List<String> flags = values(c[11]);
        List<String> ext = values(c[12]);
        List<String> kind = values(c[13]);
        int n = seq.size();
        for (List<String> v : List.of(len, sport, dport, flags, ext, kind)) {
            if (v.size() != n) {
                throw new IllegalStateException("packet " + number + ": RDS fields with different counts: " + line);
            }
        }
        List<Frame> frames = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            frames.add(new Frame(Long.parseUnsignedLong(seq.get(i)), Long.parseLong(len.get(i)),
                    Integer.parseInt(sport.get(i)), Integer.parseInt(dport.get(i)), Integer.decode(flags.get(i)),
                    ext.get(i), kind.get(i)));
        }
        List<Integer> severities = values(c[15]).stream().map(Integer::decode).toList();
        return new Packet(number, direction, frames, !c[14].isEmpty(), severities, c[16], c[17]);
    }

    private static List<String> values(String field) {
        return field.isEmpty() ? List.of() : Arrays.asList(field.split("\\|", -1));
    }

    private static String first(String field) {
        int bar = field.indexOf('|');
        return bar < 0 ? field : field.substring(0, bar);
    }

    /** As rds-core's pcap reader writes addresses: v4-mapped IPv6 as IPv4, IPv6 in Java's long form. */
    private static String address(String text) {
        if (text.isEmpty()) {
            return text;
        }
        try {
            return InetAddress.getByName(text).getHostAddress();
        } catch (UnknownHostException e) {
            throw new IllegalStateException("not an address: " + text, e);
        }
    }
}
