package org.rds4j.core.wire;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Map;

/**
 * Writes a seed input for a fuzz test that reads it through Jazzer's {@code FuzzedDataProvider}: byte arrays are
 * taken from the front of the input, numbers and booleans from its end, last byte first (a number in a range of
 * {@code r} values takes as many bytes as {@code r - 1} needs, most significant first, and is reduced modulo
 * {@code r}). Calling these methods in the order the fuzz test consumes makes an input that drives it as intended.
 */
public final class FuzzSeed {
    private final ByteArrayOutputStream front = new ByteArrayOutputStream();
    private final ByteArrayOutputStream tail = new ByteArrayOutputStream();

    /** The test's {@code consumeInt(min, max)} (or {@code consumeLong}) returns {@code value}. */
    public FuzzSeed number(long min, long max, long value) {
        if (value < min || value > max) {
            throw new IllegalArgumentException(value + " is outside [" + min + ", " + max + "]");
        }
        long range = max - min;                 // fine for the ranges these tests use (below 2^63)
        long v = value - min;
        int bytes = 0;
        while (bytes < 8 && (range >>> (8 * bytes)) > 0) {
            bytes++;
        }
        for (int i = bytes - 1; i >= 0; i--) {
            tail.write((int) (v >>> (8 * i)));  // consumed first = most significant
        }
        return this;
    }

    /** The test's {@code consumeInt()} (full range) returns {@code value}. */
    public FuzzSeed anyInt(int value) {
        long v = (long) value - Integer.MIN_VALUE;
        for (int i = 3; i >= 0; i--) {
            tail.write((int) (v >>> (8 * i)));
        }
        return this;
    }

    /** The test's {@code consumeLong()} (full range) returns {@code value}. */
    public FuzzSeed anyLong(long value) {
        long v = value - Long.MIN_VALUE;
        for (int i = 7; i >= 0; i--) {
            tail.write((int) (v >>> (8 * i)));
        }
        return this;
    }

    /** The test's {@code consumeBoolean()} returns {@code value}. */
    public FuzzSeed bool(boolean value) {
        tail.write(value ? 1 : 0);
        return this;
    }

    /** The test's {@code consumeBytes(n)} or {@code consumeRemainingAsBytes()} returns {@code bytes}. */
    public FuzzSeed bytes(byte[] bytes) {
        front.writeBytes(bytes);
        return this;
    }

    /** The input: the front bytes, then the numbers in reverse order of consumption. */
    public byte[] build() {
        byte[] t = tail.toByteArray();
        byte[] out = Arrays.copyOf(front.toByteArray(), front.size() + t.length);
        for (int i = 0; i < t.length; i++) {
            out[front.size() + i] = t[t.length - 1 - i];
        }
        return out;
    }

    /**
     * Compares the committed seed files of one fuzz test with {@code seeds}, or writes them when the system property
     * {@code rds4j.fuzz.writeSeeds} is set (run from the module directory). A seed file that differs from what its
     * generator makes is a failure: regenerate and commit them together.
     *
     * @param dir the inputs directory, relative to the module, such as {@code src/test/resources/org/.../XInputs/m}
     * @param seeds the seeds by file name
     */
    public static void check(String dir, Map<String, byte[]> seeds) {
        Path d = Path.of(dir);
        try {
            if (Boolean.getBoolean("rds4j.fuzz.writeSeeds")) {
                Files.createDirectories(d);
                for (Map.Entry<String, byte[]> e : seeds.entrySet()) {
                    Files.write(d.resolve(e.getKey()), e.getValue());
                }
                return;
            }
            for (Map.Entry<String, byte[]> e : seeds.entrySet()) {
                Path f = d.resolve(e.getKey());
                if (!Files.exists(f) || !Arrays.equals(e.getValue(), Files.readAllBytes(f))) {
                    throw new AssertionError(f + " is missing or differs from its generator; regenerate with "
                            + "-Drds4j.fuzz.writeSeeds=true and commit it");
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
