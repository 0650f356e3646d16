package org.rds4j.bench;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

class MachineInfoTest {

    @Test
    void theTcpLineGivesTheKernelsSettingsWhole() throws Exception {
        Path cc = Path.of("/proc/sys/net/ipv4/tcp_congestion_control");
        assumeTrue(Files.isReadable(cc), "not Linux: the report has no TCP line");
        // Each value as the kernel gives it, whitespace folded: a sysctl read in pieces stops after one byte.
        String algorithm = String.join(" ", Files.readAllLines(cc)).trim();
        String wmem = String.join(" ", Files.readAllLines(Path.of("/proc/sys/net/ipv4/tcp_wmem")))
                .trim().replaceAll("\\s+", " ");
        List<String> lines = MachineInfo.describe(Path.of("."));
        String expected = "TCP: congestion control " + algorithm + ", tcp_wmem " + wmem + ", tcp_rmem ";
        assertTrue(lines.stream().anyMatch(l -> l.startsWith(expected)), "no line starting " + expected + " in "
                + lines);
    }
}
