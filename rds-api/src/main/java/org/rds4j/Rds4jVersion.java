package org.rds4j;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Properties;

/** Reads rds4j's version once from the resource the build fills in (rds4j-version.properties). */
final class Rds4jVersion {
    static final String VERSION = read();

    private Rds4jVersion() {
    }

    private static String read() {
        try (InputStream in = Rds4jVersion.class.getResourceAsStream("rds4j-version.properties")) {
            if (in == null) {
                // Classes compiled without the build's resources (an IDE that skips filtering): say so, not guess.
                return "unknown";
            }
            Properties p = new Properties();
            p.load(in);
            String v = p.getProperty("version", "unknown");
            return v.startsWith("${") ? "unknown" : v;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read rds4j's version resource", e);
        }
    }
}
