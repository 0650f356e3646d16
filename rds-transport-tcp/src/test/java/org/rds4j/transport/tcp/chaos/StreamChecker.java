package org.rds4j.transport.tcp.chaos;

import java.nio.ByteBuffer;
import java.util.BitSet;

/**
 * Checks one stream of messages (one sender to one receiver) as it arrives: every message must be the next one, of
 * the size and bytes {@link Chaos#fillBody} gives it. Counts, rather than throws, so that a failing run reports the
 * whole damage (how many lost, duplicated, reordered, corrupted) and the first anomaly in detail.
 *
 * <p>Not thread-safe: one receiving thread owns it; read the results after that thread stopped (or under the
 * checker's monitor, which {@link #accept} holds).
 */
final class StreamChecker {
    private final long seed;
    private final int stream;
    private final int minSize;
    private final int maxSize;
    private final long total;
    private final BitSet seen = new BitSet();
    private final byte[] scratch;

    private long expected;
    private long received;
    private long bytes;
    private long duplicates;
    private long outOfOrder;
    private long corrupt;
    private long unplaceable;
    private long forwardJumps;
    private String firstAnomaly;

    /**
     * @param total how many messages the stream has ({@code k < total}); anything naming a larger {@code k} is
     *        corrupt
     */
    StreamChecker(long seed, int stream, int maxSize, long total) {
        this(seed, stream, 0, maxSize, total);
    }

    /**
     * @param minSize the smallest message size: 8 or more makes every message name its {@code k} fully, so that a
     *        receiver that joins a stream midway (a restarted host) can place even its first message
     */
    StreamChecker(long seed, int stream, int minSize, int maxSize, long total) {
        this.seed = seed;
        this.stream = stream;
        this.minSize = minSize;
        this.maxSize = maxSize;
        this.total = total;
        this.scratch = new byte[maxSize];
    }

    /** Checks one received payload (position to limit); returns the {@code k} it was taken for, or -1 if corrupt. */
    synchronized long accept(ByteBuffer payload) {
        received++;
        int len = payload.remaining();
        bytes += len;
        long k = Chaos.identify(payload, expected);
        if (k < 0 || k >= total) {
            corrupt++;
            anomaly("message #" + received + " of " + len + " bytes names k=" + k + ", outside the stream (expected "
                    + expected + ")");
            return -1;
        }
        long hash = Chaos.messageHash(seed, stream, k);
        int size = Chaos.size(hash, minSize, maxSize);
        if (size != len && len < 8) {
            // A message too short to name its k fully, which is not the one expected: after a loss, it cannot be
            // placed (its bytes may well be intact). Only a run with other anomalies produces these.
            unplaceable++;
            anomaly("a " + len + "-byte message arrived where k=" + expected + " (" + size + " bytes) was expected");
            return -1;
        }
        if (size != len) {
            corrupt++;
            anomaly("k=" + k + " arrived with " + len + " bytes, sent with " + size + " (expected k=" + expected + ")");
            return -1;
        }
        Chaos.fillBody(scratch, size, hash, stream, k);
        int at = payload.mismatch(ByteBuffer.wrap(scratch, 0, size));
        if (at >= 0) {
            corrupt++;
            anomaly("k=" + k + " (" + size + " bytes) differs from what was sent at byte " + at + " (expected k="
                    + expected + ")");
            return -1;
        }
        int ki = (int) k;
        if (seen.get(ki)) {
            duplicates++;
            anomaly("k=" + k + " arrived twice (expected k=" + expected + ")");
            return k;
        }
        seen.set(ki);
        if (k < expected) {
            outOfOrder++;
            anomaly("k=" + k + " arrived after k=" + (expected - 1));
            return k;
        }
        if (k > expected) {
            forwardJumps++;
            anomaly("k=" + k + " arrived where k=" + expected + " was expected: " + (k - expected)
                    + " message(s) missing at that point");
        }
        expected = k + 1;
        return k;
    }

    private void anomaly(String what) {
        if (firstAnomaly == null) {
            firstAnomaly = "stream " + stream + ": " + what;
        }
    }

    synchronized long received() {
        return received;
    }

    synchronized long bytes() {
        return bytes;
    }

    /** How many different messages of the stream arrived. */
    synchronized long distinct() {
        return seen.cardinality();
    }

    /** The next {@code k} in order: all before it arrived, or were skipped over. */
    synchronized long expected() {
        return expected;
    }

    /** Whether messages {@code 0..n-1} all arrived. */
    synchronized boolean hasFirst(long n) {
        return seen.nextClearBit(0) >= n;
    }

    synchronized long duplicates() {
        return duplicates;
    }

    synchronized long outOfOrder() {
        return outOfOrder;
    }

    synchronized long corrupt() {
        return corrupt;
    }

    /** Messages under 8 bytes that fit nowhere near the expected one (only after a loss or duplicate). */
    synchronized long unplaceable() {
        return unplaceable;
    }

    /** How many times a message arrived beyond the next expected one (a hole opened). */
    synchronized long forwardJumps() {
        return forwardJumps;
    }

    synchronized String firstAnomaly() {
        return firstAnomaly;
    }

    /** Whether the stream of {@code sent} messages arrived perfectly: all of them, once, in order, intact. */
    synchronized boolean perfect(long sent) {
        return received == sent && duplicates == 0 && outOfOrder == 0 && corrupt == 0 && unplaceable == 0
                && forwardJumps == 0 && hasFirst(sent);
    }

    /** Missing messages among the first {@code sent}. */
    synchronized long lost(long sent) {
        return sent - seen.get(0, (int) Math.min(sent, Integer.MAX_VALUE)).cardinality();
    }

    @Override
    public synchronized String toString() {
        return "stream " + stream + ": received=" + received + " distinct=" + seen.cardinality() + " duplicates="
                + duplicates + " outOfOrder=" + outOfOrder + " corrupt=" + corrupt + " unplaceable=" + unplaceable
                + " holes=" + forwardJumps;
    }
}
