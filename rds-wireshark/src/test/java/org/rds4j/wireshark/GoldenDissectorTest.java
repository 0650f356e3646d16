package org.rds4j.wireshark;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import java.util.stream.Stream;

import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.io.TempDir;

/**
 * rds.lua over every golden capture of real kernel traffic (the {@code shared/golden} directory next to the
 * repository, as CI lays it out): no malformed packet or Lua error, and every RDS frame as rds4j's codec reads it.
 */
class GoldenDissectorTest {
    @TempDir
    Path work;

    /**
     * The golden directory: $RDS4J_GOLDEN_DIR, else {@code shared/golden} in the repository's parent (CI), in the
     * repository itself, or in a directory above. Without one, the captures rds-core's tests carry (a subset), unless
     * CI is set: CI must check every capture.
     */
    static Path goldenDirectory() {
        String configured = System.getenv("RDS4J_GOLDEN_DIR");
        if (configured != null && !configured.isBlank()) {
            return Paths.get(configured);
        }
        Path repo = Paths.get(System.getProperty("rds4j.repo", "..")).toAbsolutePath().normalize();
        for (Path dir = repo; dir != null; dir = dir.getParent()) {
            Path golden = dir.resolve("shared/golden");
            if (Files.isDirectory(golden)) {
                return golden;
            }
        }
        if (System.getenv("CI") != null) {
            fail("no shared/golden next to the repository " + repo + " (set RDS4J_GOLDEN_DIR); CI is set, so every"
                    + " golden capture must be checked");
        }
        Path subset = repo.resolve("rds-core/src/test/resources/golden");
        System.out.println("no shared/golden found above " + repo + "; checking the captures in " + subset);
        return subset;
    }

    static List<Path> captures(Path dir) throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            return files.filter(p -> p.getFileName().toString().endsWith(".pcap")).sorted().toList();
        }
    }

    @TestFactory
    Stream<DynamicTest> everyGoldenCaptureDissectsAsTheCodecReadsIt() throws IOException {
        Path golden = goldenDirectory();
        List<Path> captures = captures(golden);
        assertFalse(captures.isEmpty(), "no .pcap in " + golden);
        return captures.stream().map(capture -> DynamicTest.dynamicTest(capture.getFileName().toString(), () -> {
            Path tshark = Tshark.require();  // each capture is reported skipped (or failed, under CI) without it
            Path dir = Files.createDirectories(work.resolve(capture.getFileName().toString()));
            DissectorCheck.Result r = DissectorCheck.check(tshark, capture, dir, DissectorCheck.RDS_TCP_PORT);
            assertTrue(r.frames() > 0, capture + ": no RDS frame at all");
            System.out.println(r.summary());
        }));
    }
}
