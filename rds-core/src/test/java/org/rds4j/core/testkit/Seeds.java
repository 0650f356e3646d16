package org.rds4j.core.testkit;

/**
 * The seed of a randomised test that is not a jqwik property: a fresh one, or the one {@code -Drds4j.seed=N} gives,
 * to replay a failure. Every test that takes its seed here names it in its failure messages (docs/testing.md,
 * "Replay a failure from its seed").
 */
public final class Seeds {
    /** The system property that fixes the seed. */
    public static final String PROPERTY = "rds4j.seed";

    private Seeds() {
    }

    /**
     * The seed to use.
     *
     * @return {@code -Drds4j.seed} if set (decimal, or hexadecimal with 0x), else a fresh seed
     */
    public static long seed() {
        String fixed = System.getProperty(PROPERTY);
        return fixed != null && !fixed.isBlank() ? Long.decode(fixed.trim()) : System.nanoTime();
    }
}
